/**
 * Contender: our durable store (api/store), through its public Store interface.
 * An update is a read-modify-write with optimistic concurrency: get, change, update with the
 * resourceVersion that was read (a Conflict, when two writers pick the same object, is counted and retried).
 */
import { openStore, type FileStore } from '../../api/store/index.ts';
import { mutate } from '../lib/node-object.ts';
import type { Contender } from './contender.ts';

/** A plural typed as a run-time string: the contenders store the same plain objects, not schema types. */
const PLURAL: string = 'nodes';

/** Opens our store on `dir`; `compactAfterBytes` overrides the store's default. */
export async function openOurStore(dir: string, compactAfterBytes?: number): Promise<Contender> {
  const store: FileStore = await openStore({ dir, ...(compactAfterBytes ? { compactAfterBytes } : {}) });
  let before = store.stats().journal;
  return {
    async seed(objects) {
      const batch = 64;
      for (let i = 0; i < objects.length; i += batch) {
        await Promise.all(objects.slice(i, i + batch).map((o) => store.create(PLURAL, o)));
      }
      before = store.stats().journal;
    },
    async update(name) {
      const current = store.get(PLURAL, name);
      if (!current) throw new Error(`${name} not found`);
      await store.update(PLURAL, mutate(current));
    },
    stats() {
      const j = store.stats().journal;
      const commits = j.commits - before.commits;
      const lines = j.lines - before.lines;
      const last = j.lastCompaction
        ? ` (last: ${j.lastCompaction.objects} objects, ${(j.lastCompaction.bytes / 2 ** 20).toFixed(1)} MiB in ${j.lastCompaction.ms} ms)`
        : '';
      return `${commits.toLocaleString('en-US')} group commits for ${lines.toLocaleString('en-US')} journal lines (${(lines / Math.max(commits, 1)).toFixed(1)} per fdatasync) since seeding; ${j.compactions} compaction(s) in all${last}`;
    },
    async close() {
      await store.close();
    },
  };
}
