/**
 * The contenders of the store benchmark, in the order they run, with how they are labelled in RESULTS.md.
 */
import type { ContenderFactory } from './contender.ts';
import { openLowdbJsonFile } from './lowdb-jsonfile.ts';
import { openSqliteBatched, openSqlitePerUpdate } from './sqlite.ts';

/** How one contender is opened, measured and described. */
export interface ContenderSpec {
  label: string;
  durable: string;
  durationMs: number;
  notes: string;
  open: ContenderFactory;
}

/** Every contender by name. Our store is imported lazily so the baselines run without it. */
export const CONTENDERS = {
  'our-store': {
    label: 'our store (api/store)',
    durable: 'yes',
    durationMs: 5_000,
    notes:
      "openStore({dir}); get → change → update with the resourceVersion read (optimistic concurrency); an update resolves after the store has fsync'd it.",
    open: async (dir) => (await import('./our-store.ts')).openOurStore(dir),
  },
  'our-store-compacting': {
    label: 'our store, compactAfterBytes = 8 MiB',
    durable: 'yes',
    durationMs: 5_000,
    notes:
      'the same store compacting its journal into a ~13 MiB snapshot every 8 MiB of journal instead of every 64 MiB, so about eight times as often: shows what compaction, done off the request path, costs the writers.',
    open: async (dir) => (await import('./our-store.ts')).openOurStore(dir, 8 * 2 ** 20),
  },
  'sqlite-full': {
    label: 'better-sqlite3, WAL, synchronous=FULL',
    durable: 'yes',
    durationMs: 5_000,
    notes:
      'one prepared SELECT + UPDATE per update in its own implicit transaction (one WAL fsync each: checked with strace while writing this benchmark, 100 updates made 110 fsync calls). better-sqlite3 is synchronous, so each writer awaits `setImmediate` then runs the update on the event loop: the 64 writers take turns, and every commit blocks the loop.',
    open: openSqlitePerUpdate,
  },
  'sqlite-full-batched': {
    label: 'better-sqlite3, WAL, FULL, hand-made group commit',
    durable: 'yes',
    durationMs: 5_000,
    notes:
      "a variant, not the issue's baseline: every update pending in one event-loop tick runs in one transaction (one fsync for the batch).",
    open: openSqliteBatched,
  },
  'lowdb-jsonfile': {
    label: 'lowdb 7 stock JSONFile',
    durable: '**no** (no fsync)',
    durationMs: 5_000,
    notes:
      '`new Low(new JSONFile(path), defaults)`; each update mutates `db.data` and awaits `db.write()`, which pretty-prints the whole document (`JSON.stringify(data, null, 2)`, synchronously, on every call) and writes it to a temp file renamed over the old one (steno coalesces writes that arrive while one is in flight). It never fsyncs, so an acknowledged write can be lost on power failure: it is not durable, yet it is the baseline.',
    open: openLowdbJsonFile,
  },
} satisfies Record<string, ContenderSpec>;

/** The name of a contender. */
export type ContenderName = keyof typeof CONTENDERS;
