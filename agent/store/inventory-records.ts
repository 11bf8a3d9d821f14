/**
 * The owned inventory as store records: one record per owned resource (name = resource id) carrying
 * its place in creation order (`seq`), since the store lists by name and removal must run in reverse
 * creation order. An entry that takes over another's world object takes its `seq`; it is written with
 * `replaces` before the old record is deleted, so a crash between the two writes is resolved on load
 * (the older record of the pair is dropped) instead of leaving two owners of one object.
 */
import type { KubeObject } from '../../api/meta/types.ts';
import type { InventoryChange } from '../engine/reconciler.ts';
import type { InventoryEntry } from '../engine/types.ts';

/** The spec of an inventory record. */
export interface InventoryRecord {
  seq: number;
  entry: InventoryEntry;
  /** The id whose place this entry took (its record is deleted right after this one is written). */
  replaces?: string;
}

/** A planned store operation. */
export type InventoryOp = { put: string; record: InventoryRecord } | { delete: string };

const rvOf = (o: KubeObject): number => Number(o.metadata.resourceVersion ?? 0);

/**
 * Orders stored inventory records into the engine's inventory (creation order), resolving an
 * interrupted take-over: when X replaces Y and Y is older than X, Y is a leftover and is dropped
 * (returned in `leftovers`, to be deleted).
 */
export function orderInventory(objects: readonly KubeObject[]): { entries: InventoryEntry[]; leftovers: string[] } {
  const byName = new Map(objects.map((o) => [o.metadata.name as string, o]));
  const leftovers = new Set<string>();
  for (const o of objects) {
    const replaces = (o.spec as InventoryRecord).replaces;
    const old = replaces === undefined ? undefined : byName.get(replaces);
    if (old && replaces !== o.metadata.name && rvOf(old) < rvOf(o)) leftovers.add(replaces!);
  }
  const kept = objects.filter((o) => !leftovers.has(o.metadata.name as string));
  kept.sort((a, b) => (a.spec as InventoryRecord).seq - (b.spec as InventoryRecord).seq || rvOf(a) - rvOf(b));
  return { entries: kept.map((o) => (o.spec as InventoryRecord).entry), leftovers: [...leftovers] };
}

/** Checks one stored record's shape; a damaged one fails the start (never read as "not owned"). */
export function checkInventoryRecord(o: KubeObject, where: string): void {
  const r = o.spec as Partial<InventoryRecord> | undefined;
  const e = r?.entry;
  if (
    !r ||
    !Number.isFinite(r.seq) ||
    !e ||
    e.id !== o.metadata.name ||
    typeof e.kind !== 'string' ||
    typeof e.spec !== 'object'
  ) {
    throw new Error(`${where}: inventory record ${JSON.stringify(o.metadata.name)} is damaged; refusing to start`);
  }
}

/**
 * The store operations for one engine inventory change, given how to look up a stored record's seq
 * and the next free seq.
 */
export function opsFor(
  change: InventoryChange,
  seqOf: (id: string) => number | undefined,
  nextSeq: () => number,
): InventoryOp[] {
  if ('delete' in change) return [{ delete: change.delete }];
  const { put: entry, replaces } = change;
  const taken = replaces !== undefined && replaces !== entry.id ? seqOf(replaces) : undefined;
  if (taken !== undefined) {
    return [{ put: entry.id, record: { seq: taken, entry, replaces } }, { delete: replaces! }];
  }
  return [{ put: entry.id, record: { seq: seqOf(entry.id) ?? nextSeq(), entry } }];
}
