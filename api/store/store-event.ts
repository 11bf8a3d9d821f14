/**
 * A watch event as the store delivers it: `{type, object}` like any StoreWatchEvent, plus a lazily computed,
 * cached `json` line so a server fanning one change out to many watchers serializes it once, not once per
 * watcher. `JSON.stringify(event)` gives the same text as `event.json`. Events are shared by every watcher:
 * read-only.
 *
 * In the event log (watch-hub.ts) an event outlives its object's next change, but the object's old versions need
 * not: once a newer event of the same object is published, the hub lets the older one drop its object
 * (`dropObject`) and the newer one its previous version (`dropPrev`), keeping only their JSON (which the journal
 * line made anyway). A watcher catching up from the log that reads one of them gets it decoded again, frozen. So
 * the log holds one decoded version per object (the store's current one, shared) instead of one per event.
 */
import type { KubeObject, WatchEventType } from '../meta/types.ts';
import { deepFreeze } from '../meta/frozen.ts';
import { onlyStatusChanged, withResourceVersion } from './object-meta.ts';
import type { StoreWatchEvent } from './types.ts';

/** A StoreWatchEvent carrying its serialized form (what `Store.watch` callbacks receive). */
export interface SerializedWatchEvent extends StoreWatchEvent {
  /** `{"type":...,"object":...}` without a newline, computed once per event. */
  readonly json: string;
  /** The resourceVersion of the change (0 for ERROR), without reading `object`. */
  readonly rv: number;
}

/** Options of the StoreEvent constructor. */
export interface StoreEventOptions {
  type: WatchEventType;
  object: KubeObject;
  plural: string;
  /** The resourceVersion of the change (for synthetic ADDED events: the object's). */
  rv: number;
  /** The object before a MODIFIED change (for selector transitions). */
  prev?: KubeObject;
  /** The object's JSON, when already serialized (e.g. for the journal). */
  objectJson?: string;
}

/** One change of one object (see the file comment). */
export class StoreEvent implements SerializedWatchEvent {
  readonly type: WatchEventType;
  /** The object's name (without reading `object`, which may have to be decoded). */
  readonly name: string | undefined;
  #object: KubeObject | undefined;
  readonly #rv: number;
  readonly #plural: string;
  #prev?: KubeObject;
  /** The JSON of `prev`, once `dropPrev` let go of the object. */
  #prevJson?: string;
  #objectJson?: string;
  #json?: string;
  #statusOnly?: boolean;
  #added?: StoreEvent;
  #deleted?: StoreEvent;

  constructor(opts: StoreEventOptions) {
    this.type = opts.type;
    this.name = opts.object.metadata?.name;
    this.#object = opts.object;
    this.#rv = opts.rv;
    this.#plural = opts.plural;
    this.#prev = opts.prev;
    this.#objectJson = opts.objectJson;
  }

  /** The object if it is held decoded (not after `dropObject`), without decoding it. */
  get heldObject(): KubeObject | undefined {
    return this.#object;
  }

  /** The object (after `dropObject`, decoded again from its JSON, frozen like a stored object). */
  get object(): KubeObject {
    this.#object ??= decode(this.#objectJson as string);
    return this.#object;
  }

  get rv(): number {
    return this.#rv;
  }

  get plural(): string {
    return this.#plural;
  }

  /** The object before a MODIFIED change (after `dropPrev`, decoded again from its JSON). */
  get prev(): KubeObject | undefined {
    if (this.#prev === undefined && this.#prevJson !== undefined) this.#prev = decode(this.#prevJson);
    return this.#prev;
  }

  /**
   * True for a MODIFIED change of nothing but `.status` (and the resourceVersion): a write of the status
   * subresource. Decided once per event, from the previous version; false when that is not known.
   */
  get statusOnly(): boolean {
    if (this.#statusOnly === undefined) {
      const prev = this.type === 'MODIFIED' ? this.prev : undefined;
      this.#statusOnly = prev !== undefined && onlyStatusChanged(prev, this.object);
    }
    return this.#statusOnly;
  }

  /** The object's JSON, serialized once and cached (the journal line's, when the store passed it). */
  get objectJson(): string {
    this.#objectJson ??= JSON.stringify(this.#object);
    return this.#objectJson;
  }

  /** The event as one watch-stream line (without newline), serialized once and cached. */
  get json(): string {
    this.#json ??= `{"type":"${this.type}","object":${this.objectJson}}`;
    return this.#json;
  }

  /** What `JSON.stringify(event)` writes: the same as `json`. */
  toJSON(): { type: WatchEventType; object: KubeObject } {
    return { type: this.type, object: this.object };
  }

  /** Lets go of the decoded object (a newer version replaced it); `object` decodes it again when asked. */
  dropObject(): void {
    if (this.#objectJson !== undefined) this.#object = undefined;
  }

  /** Lets go of the previous version, keeping its JSON (`prevJson`, that version's `objectJson`) to decode it again. */
  dropPrev(prevJson: string): void {
    this.#prevJson = prevJson;
    this.#prev = undefined;
  }

  /** This change as seen by a watcher whose selector matches the new object but not the old: ADDED. */
  asAdded(): StoreEvent {
    this.#added ??= new StoreEvent({
      type: 'ADDED',
      object: this.object,
      plural: this.#plural,
      rv: this.#rv,
      objectJson: this.objectJson,
    });
    return this.#added;
  }

  /** This change as seen by a watcher whose selector matched only the old object: DELETED with the old content. */
  asDeleted(): StoreEvent {
    const old = this.prev ?? this.object;
    this.#deleted ??= new StoreEvent({
      type: 'DELETED',
      object: withResourceVersion(old, this.#rv),
      plural: this.#plural,
      rv: this.#rv,
    });
    return this.#deleted;
  }
}

/** A stored object decoded from its JSON, frozen like the store's own. */
function decode(json: string): KubeObject {
  return deepFreeze(JSON.parse(json) as KubeObject);
}
