/**
 * A watch event as the store delivers it: `{type, object}` like any StoreWatchEvent, plus a lazily computed,
 * cached `json` line so a server fanning one change out to many watchers serializes it once, not once per
 * watcher. Only `type` and `object` are own enumerable properties, so `JSON.stringify(event)` gives the same
 * text as `event.json`. Events are shared by every watcher: read-only.
 */
import type { KubeObject, WatchEventType } from '../meta/types.ts';
import { withResourceVersion } from './object-meta.ts';
import type { StoreWatchEvent } from './types.ts';

/** A StoreWatchEvent carrying its serialized form (what `Store.watch` callbacks receive). */
export interface SerializedWatchEvent extends StoreWatchEvent {
  /** `{"type":...,"object":...}` without a newline, computed once per event. */
  readonly json: string;
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
  readonly object: KubeObject;
  readonly #rv: number;
  readonly #plural: string;
  readonly #prev?: KubeObject;
  #objectJson?: string;
  #json?: string;
  #added?: StoreEvent;
  #deleted?: StoreEvent;

  constructor(opts: StoreEventOptions) {
    this.type = opts.type;
    this.object = opts.object;
    this.#rv = opts.rv;
    this.#plural = opts.plural;
    this.#prev = opts.prev;
    this.#objectJson = opts.objectJson;
  }

  get rv(): number {
    return this.#rv;
  }

  get plural(): string {
    return this.#plural;
  }

  get prev(): KubeObject | undefined {
    return this.#prev;
  }

  /** The event as one watch-stream line (without newline), serialized once and cached. */
  get json(): string {
    this.#objectJson ??= JSON.stringify(this.object);
    this.#json ??= `{"type":"${this.type}","object":${this.#objectJson}}`;
    return this.#json;
  }

  /** This change as seen by a watcher whose selector matches the new object but not the old: ADDED. */
  asAdded(): StoreEvent {
    this.#added ??= new StoreEvent({
      type: 'ADDED',
      object: this.object,
      plural: this.#plural,
      rv: this.#rv,
      objectJson: this.#objectJson,
    });
    return this.#added;
  }

  /** This change as seen by a watcher whose selector matched only the old object: DELETED with the old content. */
  asDeleted(): StoreEvent {
    const old = this.#prev ?? this.object;
    this.#deleted ??= new StoreEvent({
      type: 'DELETED',
      object: withResourceVersion(old, this.#rv),
      plural: this.#plural,
      rv: this.#rv,
    });
    return this.#deleted;
  }
}
