/**
 * The registered watchers by kind, and within a kind by the object name their field selector requires
 * (`metadata.name=X`, as every agent's watch on its own Declaration and Node): an event is offered only to
 * the watchers that can see it — those of its kind without a name requirement, and those requiring its name —
 * so a change to one node's Declaration costs O(1) watchers, not one selector check per node in the mesh.
 */
import type { StoreEvent } from './store-event.ts';
import type { Watcher } from './watcher.ts';

/** The watchers of one kind: those without a name requirement, and those with one by name. */
interface KindWatchers {
  any: Set<Watcher>;
  byName: Map<string, Set<Watcher>>;
}

/** See the file comment. */
export class WatcherRegistry {
  readonly #byPlural = new Map<string, KindWatchers>();

  add(w: Watcher): void {
    let kind = this.#byPlural.get(w.plural);
    if (!kind) this.#byPlural.set(w.plural, (kind = { any: new Set(), byName: new Map() }));
    if (w.name === undefined) {
      kind.any.add(w);
      return;
    }
    let set = kind.byName.get(w.name);
    if (!set) kind.byName.set(w.name, (set = new Set()));
    set.add(w);
  }

  delete(w: Watcher): void {
    const kind = this.#byPlural.get(w.plural);
    if (!kind) return;
    if (w.name === undefined) kind.any.delete(w);
    else {
      const set = kind.byName.get(w.name);
      set?.delete(w);
      if (set?.size === 0) kind.byName.delete(w.name);
    }
    if (kind.any.size === 0 && kind.byName.size === 0) this.#byPlural.delete(w.plural);
  }

  /** The watchers that may see `e` (a copy: delivering may add or remove watchers). */
  for(e: StoreEvent): Watcher[] {
    const kind = this.#byPlural.get(e.plural);
    if (!kind) return [];
    const named = kind.byName.get(e.name ?? '');
    return named ? [...kind.any, ...named] : [...kind.any];
  }

  /** How many watchers are registered. */
  get size(): number {
    let n = 0;
    for (const kind of this.#byPlural.values()) {
      n += kind.any.size;
      for (const set of kind.byName.values()) n += set.size;
    }
    return n;
  }
}
