/**
 * The store's state and its indexes over lowdb's `db.data`: objects by kind and name, uid → object,
 * owner uid → dependents (so a cascade does not scan every object), sorted names per kind (for list).
 * Every change goes through `put`/`remove` inside a Txn, which issues the resourceVersion, updates the
 * indexes, and records the journal line and the watch event of the change.
 */
import type { KubeObject } from '../meta/types.ts';
import {
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  requiredName,
} from '../meta/selectors.ts';
import type { ListOptions } from './types.ts';
import { withResourceVersion } from './object-meta.ts';
import { deepFreeze, frozenJsonCopy, rememberJsonText } from '../meta/frozen.ts';
import { delLine, putLine, txnLine, type JournalEntry, type StoreData } from './store-data.ts';
import { StoreEvent } from './store-event.ts';

/** The changes of one store operation: journaled as one line, published as events in rv order. */
export class Txn {
  readonly lines: string[] = [];
  readonly events: StoreEvent[] = [];
  rv = 0;

  add(rv: number, line: string, event: StoreEvent): void {
    this.rv = rv;
    this.lines.push(line);
    this.events.push(event);
  }

  /** The journal entry of the whole operation (one line, so it is replayed or dropped as a whole). */
  entry(): JournalEntry {
    return { rv: this.rv, line: this.lines.length === 1 ? this.lines[0] : txnLine(this.rv, this.lines) };
  }
}

/** A reference to a stored object. */
export interface ObjectRef {
  plural: string;
  name: string;
}

const keyOf = (plural: string, name: string): string => `${plural}/${name}`;

function refOf(key: string): ObjectRef {
  const i = key.indexOf('/');
  return { plural: key.slice(0, i), name: key.slice(i + 1) };
}

/** The indexed state (see the file comment). */
export class StoreState {
  readonly data: StoreData;
  readonly #uids = new Map<string, string>();
  readonly #dependents = new Map<string, Set<string>>();
  readonly #sorted = new Map<string, string[]>();

  constructor(data: StoreData) {
    this.data = data;
    for (const [plural, kind] of data.kinds)
      for (const obj of kind.values()) {
        deepFreeze(obj);
        this.#index(plural, obj);
      }
  }

  get(plural: string, name: string): KubeObject | undefined {
    return this.data.kinds.get(plural)?.get(name);
  }

  /** True when an object with this uid exists (in any kind). */
  hasUid(uid: string): boolean {
    return this.#uids.has(uid);
  }

  /** The objects whose ownerReferences name this uid. */
  dependents(uid: string): ObjectRef[] {
    return [...(this.#dependents.get(uid) ?? [])].map(refOf);
  }

  /** Matching objects of a kind, sorted by name. Throws BadRequest for malformed selectors. */
  list(plural: string, opts: ListOptions = {}): KubeObject[] {
    const label = parseLabelSelector(opts.labelSelector ?? '');
    const field = parseFieldSelector(opts.fieldSelector ?? '');
    const kind = this.data.kinds.get(plural);
    if (!kind) return [];
    // A selector requiring one name (an agent listing its own Declaration) reads that object, not the kind.
    const one = requiredName(field);
    let names = one !== undefined ? (kind.has(one) ? [one] : []) : this.#sorted.get(plural);
    if (!names) this.#sorted.set(plural, (names = [...kind.keys()].sort()));
    const items: KubeObject[] = [];
    for (const name of names) {
      const obj = kind.get(name) as KubeObject;
      if (matchesLabels(obj, label) && matchesFields(obj, field)) items.push(obj);
    }
    return items;
  }

  /** Counts of objects per kind. */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [plural, kind] of this.data.kinds) if (kind.size > 0) out[plural] = kind.size;
    return out;
  }

  /** Stores `obj` (created or replaced) with the next resourceVersion; returns the stored object. */
  put(txn: Txn, plural: string, obj: KubeObject, type: 'ADDED' | 'MODIFIED'): KubeObject {
    const rv = ++this.data.rv;
    const versioned = withResourceVersion(obj, rv);
    const json = JSON.stringify(versioned);
    // The store's own copy, exactly what the journal holds; frozen, since every reader shares it, and sharing
    // the parts of the previous version the write left alone (frozen.ts).
    const stored = frozenJsonCopy(versioned);
    rememberJsonText(stored, json);
    const name = stored.metadata.name as string;
    let kind = this.data.kinds.get(plural);
    if (!kind) this.data.kinds.set(plural, (kind = new Map()));
    const prev = kind.get(name);
    kind.set(name, stored);
    if (!prev) {
      this.#sorted.delete(plural);
      this.#index(plural, stored);
    } else if (!sameIndexKeys(prev, stored)) {
      // Most updates (a status, a spec) keep the uid and the owners: re-indexing them would delete and re-add the
      // same key in the owner's set, which at thousands of dependents (every Declaration of one owner) is not free.
      this.#unindex(plural, prev);
      this.#index(plural, stored);
    }
    txn.add(
      rv,
      putLine(rv, plural, name, json),
      new StoreEvent({ type, object: stored, plural, rv, prev, objectJson: json }),
    );
    return stored;
  }

  /** Removes a stored object with the next resourceVersion; returns `obj` as deleted (carrying that rv). */
  remove(txn: Txn, plural: string, obj: KubeObject): KubeObject {
    const rv = ++this.data.rv;
    const name = obj.metadata.name as string;
    const json = JSON.stringify(withResourceVersion(obj, rv));
    // `obj` may share parts with a caller's object: the event gets its own copy, frozen like a stored object.
    const gone = deepFreeze(JSON.parse(json) as KubeObject);
    rememberJsonText(gone, json);
    const kind = this.data.kinds.get(plural);
    const prev = kind?.get(name);
    kind?.delete(name);
    this.#sorted.delete(plural);
    if (prev) this.#unindex(plural, prev);
    txn.add(
      rv,
      delLine(rv, plural, name),
      new StoreEvent({ type: 'DELETED', object: gone, plural, rv, objectJson: json }),
    );
    return gone;
  }

  #index(plural: string, obj: KubeObject): void {
    const key = keyOf(plural, obj.metadata.name as string);
    if (obj.metadata.uid) this.#uids.set(obj.metadata.uid, key);
    for (const ref of obj.metadata.ownerReferences ?? []) {
      let set = this.#dependents.get(ref.uid);
      if (!set) this.#dependents.set(ref.uid, (set = new Set()));
      set.add(key);
    }
  }

  #unindex(plural: string, obj: KubeObject): void {
    const key = keyOf(plural, obj.metadata.name as string);
    if (obj.metadata.uid && this.#uids.get(obj.metadata.uid) === key) this.#uids.delete(obj.metadata.uid);
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const set = this.#dependents.get(ref.uid);
      set?.delete(key);
      if (set?.size === 0) this.#dependents.delete(ref.uid);
    }
  }
}

/** Whether two versions of an object have the same uid and owners (in order): what `#index` keys them by. */
function sameIndexKeys(a: KubeObject, b: KubeObject): boolean {
  if (a.metadata.uid !== b.metadata.uid) return false;
  const ra = a.metadata.ownerReferences ?? [];
  const rb = b.metadata.ownerReferences ?? [];
  return ra === rb || (ra.length === rb.length && ra.every((r, i) => r.uid === rb[i].uid));
}
