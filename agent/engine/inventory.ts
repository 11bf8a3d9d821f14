/**
 * The in-memory, ordered inventory of what the agent created and owns. Order is creation order (an
 * update keeps an entry's place; an entry taking over another's world object takes its place), so
 * removal in reverse inventory order undoes creation order. Persistence is the caller's (see reconciler).
 */
import type { InventoryEntry } from './types.ts';

/** One change to the inventory, as handed to the persistence hook. */
export type InventoryChange = { put: InventoryEntry; replaces?: string } | { delete: string };

/** An ordered inventory with lookup by id. */
export interface Inventory {
  list(): readonly InventoryEntry[];
  get(id: string): InventoryEntry | undefined;
  /** Adds or replaces `entry` (in the place of `replaces`, when given), returning the change made. */
  put(entry: InventoryEntry, replaces?: string): InventoryChange;
  delete(id: string): InventoryChange;
}

/** Creates an inventory from entries in creation order; throws on duplicate ids (a corrupt store). */
export function createInventory(entries: readonly InventoryEntry[]): Inventory {
  let list: InventoryEntry[] = [...entries];
  const byId = new Map<string, InventoryEntry>();
  for (const e of list) {
    if (byId.has(e.id)) throw new Error(`inventory holds resource ${JSON.stringify(e.id)} twice`);
    byId.set(e.id, e);
  }
  const indexOf = (id: string): number => list.findIndex((e) => e.id === id);
  return {
    list: () => list,
    get: (id) => byId.get(id),
    put(entry, replaces) {
      const at = indexOf(entry.id);
      const old = replaces !== undefined && replaces !== entry.id ? indexOf(replaces) : -1;
      list = [...list];
      byId.set(entry.id, entry);
      if (old >= 0) {
        byId.delete(replaces!);
        list[old] = entry;
        if (at >= 0) list.splice(at, 1);
      } else if (at >= 0) {
        list[at] = entry;
      } else {
        list.push(entry);
      }
      return replaces !== undefined && old >= 0 ? { put: entry, replaces } : { put: entry };
    },
    delete(id) {
      list = list.filter((e) => e.id !== id);
      byId.delete(id);
      return { delete: id };
    },
  };
}
