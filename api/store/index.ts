/**
 * The control plane's durable store (the agent's own store is the same code): `openStore` and the types
 * its callers use. lowdb is the document interface — `Low<StoreData>`, the whole state in memory, typed —
 * over a durable journal adapter; nothing else holds state. README.md beside this file has the file map.
 *
 * The path of one write (e.g. `update`), layer by layer:
 *   1. file-store.ts `DurableStore.update`: checks the object, resolves generateName / merges status per
 *      subresource (object-meta.ts), runs the caller's `admit` check (the API server's admission), checks the
 *      resourceVersion precondition, decides generation.
 *   2. state.ts `StoreState.put`/`remove` inside a `Txn` (cascade.ts for deletes): issues the resourceVersion,
 *      changes `db.data.kinds` in place, updates the indexes, and records the journal line and watch event.
 *      Synchronous: the next request already sees the change.
 *   3. file-store.ts `#commit`: stages the Txn's one journal line in `db.data.unjournaled` and its events in the
 *      watch hub, then `db.write()`.
 *   4. lowdb `db.write()` calls journal-adapter.ts `JournalAdapter.write(db.data)`: drains `unjournaled` into
 *      the journal (and may start a compaction: snapshot.ts, off the request path).
 *   5. journal.ts `Journal`: group commit — lines appended while one write + fdatasync is in flight go out
 *      together in the next — then reports the batch's resourceVersion durable.
 *   6. watch-hub.ts `WatchHub.publish`: the now-durable events go to the event log and the watchers; then the
 *      write's promise resolves and the caller answers.
 *
 * Invariants:
 *   - An acknowledged write is fsync'd: a write resolves (and watchers see it) only after its journal line is
 *     fdatasync'd; a new file or segment is also made durable in its directory (fsync of the directory).
 *   - A crash leaves every acknowledged write readable: the journal on disk is always a prefix of what was
 *     appended; opening replays snapshot + journal, cuts a torn last line (never acknowledged) and refuses
 *     any other damage (journal-replay.ts, snapshot.ts) rather than opening with less.
 *   - One process owns the store: the directory's LOCK file (lock.ts); a second open fails.
 */
import { mkdirSync } from 'node:fs';
import { Low } from 'lowdb';
import { DurableStore, type FileStore } from './file-store.ts';
import { JournalAdapter } from './journal-adapter.ts';
import { lockDir } from './lock.ts';
import { StoreState } from './state.ts';
import { emptyData, type StoreData } from './store-data.ts';
import { nodeStoreFs, type StoreFs } from './store-fs.ts';
import type { StoreLogger } from './store-log.ts';
import { WatchHub } from './watch-hub.ts';

export type { FileStore, StoreStats } from './file-store.ts';
export type { SerializedWatchEvent } from './store-event.ts';
export type { JournalStats } from './journal-adapter.ts';
export { storeLogTo, type StoreLogger, type StoreLogLine } from './store-log.ts';
export type { StoreFs } from './store-fs.ts';
export type * from './types.ts';

/** Options of `openStore`. */
export interface OpenStoreOptions {
  /** The store directory (created if missing); owned by one process at a time. */
  dir: string;
  /** Events kept in memory for watch resume (default 10,000). */
  eventLogCapacity?: number;
  /** Compact the journal into a snapshot once it has grown by this many bytes since the last one (default 64 MiB). */
  compactAfterBytes?: number;
  /** Where the store's log lines go (`storeLogTo(logger)` for a process's logger); default: nowhere. */
  logger?: StoreLogger;
  /** The file-system calls that write the store (default node:fs); tests pass a power-loss simulation. */
  fs?: StoreFs;
}

/**
 * Opens (or creates) the durable store in `opts.dir`: takes the directory lock, loads the snapshot and
 * replays the journal. Throws when another process holds the store or when its files are damaged.
 */
export async function openStore(opts: OpenStoreOptions): Promise<FileStore> {
  const log = opts.logger ?? (() => {});
  const capacity = opts.eventLogCapacity ?? 10_000;
  const compactAfterBytes = opts.compactAfterBytes ?? 64 * 1024 * 1024;
  if (!Number.isSafeInteger(capacity) || capacity < 1)
    throw new Error(`eventLogCapacity must be a positive integer, got ${capacity}`);
  if (!(compactAfterBytes > 0)) throw new Error(`compactAfterBytes must be positive, got ${compactAfterBytes}`);
  mkdirSync(opts.dir, { recursive: true });
  const lock = lockDir(opts.dir);
  let hub: WatchHub | undefined;
  const adapter = new JournalAdapter({
    dir: opts.dir,
    fs: opts.fs ?? nodeStoreFs,
    compactAfterBytes,
    logger: log,
    onDurable: (rv) => hub?.publish(rv),
  });
  try {
    const db = new Low<StoreData>(adapter, emptyData());
    await db.read();
    const state = new StoreState(db.data);
    hub = new WatchHub({
      capacity,
      startRv: db.data.rv,
      logger: log,
      list: (plural, o) => ({ items: state.list(plural, o), resourceVersion: String(db.data.rv) }),
      currentRv: () => db.data.rv,
    });
    return new DurableStore({ db, adapter, hub, state, lock, log });
  } catch (e) {
    await adapter.close().catch(() => {});
    lock.release();
    throw e;
  }
}
