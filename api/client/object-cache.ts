/**
 * The informer's cache of one kind, keyed by name: applies watch events and whole lists, and says what
 * changed (the events an informer reports). Pure state, no I/O.
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

/** Objects of one kind by name, with the changes each update made. */
export class ObjectCache<T extends KubeObject = KubeObject> {
  private readonly byName = new Map<string, T>();

  get(name: string): T | undefined {
    return this.byName.get(name);
  }

  /** Every object, sorted by name. */
  list(): T[] {
    return [...this.byName.keys()].sort().map((name) => this.byName.get(name) as T);
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
      this.byName.delete(name);
      return { type: 'DELETED', obj, old };
    }
    this.byName.set(name, obj);
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
      this.byName.delete(name);
      changes.push({ type: 'DELETED', obj: old, old });
    }
    for (const [name, obj] of fresh) {
      const old = this.byName.get(name);
      this.byName.set(name, obj);
      if (!old) changes.push({ type: 'ADDED', obj });
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion)
        changes.push({ type: 'MODIFIED', obj, old });
    }
    return changes;
  }
}
