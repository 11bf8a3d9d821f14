/**
 * The informer's cache of one kind, keyed by name: applies watch events and whole lists, and says what
 * changed (the events an informer reports). Pure state, no I/O.
 *
 * Indexes (client-go's Indexers): a named function maps an object to index values (e.g. an Assignment to
 * its node's name); `byIndex` answers "which objects have value v" without scanning the cache, so a
 * controller's event mapping and reconcile stay O(matches) instead of O(N) per event. The sorted `list()`
 * is kept until the next change instead of being sorted again on every call.
 */
import type { KubeObject, ObjectEvent } from '../meta/types.ts';

/** The kinds of change an informer reports. */
export type InformerEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change: `old` is the cached object before a MODIFIED or DELETED (if it was cached). */
export interface CacheChange<T extends KubeObject = KubeObject> {
  type: InformerEventType;
  obj: T;
  old?: T;
}

/** Maps an object to the values it is indexed under (none: not in the index). */
export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => readonly string[];

/** One index: its function, per value the names of the objects having it, and per name its values. */
interface Index<T extends KubeObject> {
  fn: IndexFunc<T>;
  names: Map<string, Set<string>>;
  values: Map<string, readonly string[]>;
}

/** Objects of one kind by name, with the changes each update made. */
export class ObjectCache<T extends KubeObject = KubeObject> {
  private readonly byName = new Map<string, T>();
  private readonly indexes = new Map<string, Index<T>>();
  private sorted?: T[];

  get(name: string): T | undefined {
    return this.byName.get(name);
  }

  /** Every object, sorted by name (a fresh array; the sort is kept until the next change). */
  list(): T[] {
    this.sorted ??= [...this.byName.keys()].sort().map((name) => this.byName.get(name) as T);
    return this.sorted.slice();
  }

  /** Adds the index `name` (over what is cached now and every later change); adding a name again is a no-op. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexes.has(name)) return;
    const index: Index<T> = { fn, names: new Map(), values: new Map() };
    this.indexes.set(name, index);
    for (const [objName, obj] of this.byName) indexObject(index, objName, obj);
  }

  /** The cached objects whose index `name` has `value`, sorted by name; throws for an index never added. */
  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index "${name}" on this cache`);
    return [...(index.names.get(value) ?? [])].sort().map((n) => this.byName.get(n) as T);
  }

  get size(): number {
    return this.byName.size;
  }

  /** Applies an ADDED, MODIFIED or DELETED event (ADDED/MODIFIED become MODIFIED/ADDED by what is cached). */
  apply(ev: ObjectEvent<T>): CacheChange<T> | undefined {
    const obj = ev.object;
    const name = obj.metadata?.name;
    if (!name) return undefined;
    const old = this.byName.get(name);
    if (ev.type === 'DELETED') {
      this.remove(name);
      return { type: 'DELETED', obj, old };
    }
    this.put(name, obj);
    return old ? { type: 'MODIFIED', obj, old } : { type: 'ADDED', obj };
  }

  /**
   * Replaces the contents with a fresh list and returns the differences: DELETED for objects gone,
   * ADDED for new ones, MODIFIED for ones whose resourceVersion changed.
   */
  replace(items: T[]): CacheChange<T>[] {
    const fresh = new Map(items.filter((o) => o.metadata?.name).map((o) => [o.metadata.name as string, o]));
    const changes: CacheChange<T>[] = [];
    for (const [name, old] of [...this.byName]) {
      if (fresh.has(name)) continue;
      this.remove(name);
      changes.push({ type: 'DELETED', obj: old, old });
    }
    for (const [name, obj] of fresh) {
      const old = this.byName.get(name);
      this.put(name, obj);
      if (!old) changes.push({ type: 'ADDED', obj });
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion)
        changes.push({ type: 'MODIFIED', obj, old });
    }
    return changes;
  }

  /** Stores `obj` under `name`, moving it in every index. */
  private put(name: string, obj: T): void {
    for (const index of this.indexes.values()) indexObject(index, name, obj);
    this.byName.set(name, obj);
    this.sorted = undefined;
  }

  /** Forgets `name`, and takes it out of every index. */
  private remove(name: string): void {
    if (!this.byName.has(name)) return;
    for (const index of this.indexes.values()) indexObject(index, name, undefined);
    this.byName.delete(name);
    this.sorted = undefined;
  }
}

/** Files `name` under the values of `obj` in `index` (none when undefined), leaving the values it had. */
function indexObject<T extends KubeObject>(index: Index<T>, name: string, obj: T | undefined): void {
  const values = obj ? index.fn(obj) : [];
  const before = index.values.get(name) ?? [];
  // Most changes (a status write) leave an object's index values as they were: nothing to move.
  if (values.length === before.length && values.every((v, i) => v === before[i])) return;
  for (const value of before) {
    const names = index.names.get(value);
    names?.delete(name);
    if (names?.size === 0) index.names.delete(value);
  }
  if (values.length === 0) index.values.delete(name);
  else index.values.set(name, values);
  for (const value of values) {
    let names = index.names.get(value);
    if (!names) index.names.set(value, (names = new Set()));
    names.add(name);
  }
}
