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
 *   - One process owns the store: the directory's LOCK file (lock.ts) names it by pid, start time and boot;
 *     a second open fails while that process runs.
 *   - A resourceVersion is never issued twice, not even across a crash. Reads (get, list) see the newest state,
 *     which may hold a write whose fdatasync is in flight; if the process dies then, that write is lost, yet a
 *     client may have seen it and its resourceVersion. So an open after a crash (the journal does not end with
 *     the `closed` mark a clean close writes) first journals a `fence` mark FENCE_GAP above the durable rv, and
 *     durably: the numbers in between, which the lost writes may have used, are never issued again, and a watch
 *     from one of them is 410 (it is below the watch log's start), so the client relists. A watch from the
 *     durable rv itself resumes: nothing durable lies between it and the fence. A write is refused (503) while
 *     `maxUndurable` resourceVersions are waiting for the disk, so the lost writes cannot reach the fence.
 *     Why not serve only durable state: writes must check preconditions against the newest state, so reads
 *     would need a second, lagging view of every index; a fence is one journal line per crash.
 */
import { mkdirSync } from 'node:fs';
import { Low } from 'lowdb';
import { DurableStore, type FileStore } from './file-store.ts';
import { JournalAdapter } from './journal-adapter.ts';
import type { IdlePacerOptions } from './idle-pacer.ts';
import { lockDir } from './lock.ts';
import { StoreState } from './state.ts';
import { emptyData, markLine, type StoreData } from './store-data.ts';
import { nodeStoreFs, type StoreFs } from './store-fs.ts';
import type { StoreLogger } from './store-log.ts';
import { WatchHub } from './watch-hub.ts';

export type { FileStore, StoreStats } from './file-store.ts';
export type { SerializedWatchEvent } from './store-event.ts';
export type { WatchSnapshot, WatchSnapshotStats } from './watch-snapshots.ts';
export type { JournalStats } from './journal-adapter.ts';
export { storeLogTo, type StoreLogger, type StoreLogLine } from './store-log.ts';
export type { StoreFs } from './store-fs.ts';
export { readSnapshot, writeSnapshot, type Snapshot } from './snapshot.ts';
export { nodeStoreFs } from './store-fs.ts';
export type * from './types.ts';

/** How far an open after a crash moves the resourceVersion past the durable one (index.ts file comment). */
export const FENCE_GAP = 1 << 20;

/**
 * The events a store keeps in memory for watches to resume from; a resume from further back gets 410 and relists, as
 * from kube-apiserver's bounded watch cache. 4,096 cover a minute and more of a 5,000-node mesh's steady state and
 * the lag of a paused watcher; 10,000, as before, held ~20 MiB of the control plane's heap there, and an all-nodes
 * change (about four events per node) moves past either.
 */
export const EVENT_LOG_CAPACITY = 4096;

/** Options of `openStore`. */
export interface OpenStoreOptions {
  /** The store directory (created if missing); owned by one process at a time. */
  dir: string;
  /** Events kept in memory for watch resume (default EVENT_LOG_CAPACITY). */
  eventLogCapacity?: number;
  /** Compact the journal into a snapshot once it has grown by this many bytes since the last one (default 64 MiB). */
  compactAfterBytes?: number;
  /** How a compaction gives way to a busy event loop (idle-pacer.ts; `{ maxWaitMs: 0 }`: it never waits). */
  compactionPace?: IdlePacerOptions;
  /**
   * Refuse writes (503) while this many issued resourceVersions are not durable yet (default 65,536; below
   * FENCE_GAP, so the writes a crash loses stay below the fence).
   */
  maxUndurable?: number;
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
  const capacity = opts.eventLogCapacity ?? EVENT_LOG_CAPACITY;
  const compactAfterBytes = opts.compactAfterBytes ?? 64 * 1024 * 1024;
  if (!Number.isSafeInteger(capacity) || capacity < 1)
    throw new Error(`eventLogCapacity must be a positive integer, got ${capacity}`);
  const maxUndurable = opts.maxUndurable ?? 1 << 16;
  if (!Number.isSafeInteger(maxUndurable) || maxUndurable < 1 || maxUndurable > FENCE_GAP / 2)
    throw new Error(`maxUndurable must be an integer from 1 to ${FENCE_GAP / 2}, got ${maxUndurable}`);
  if (!(compactAfterBytes > 0)) throw new Error(`compactAfterBytes must be positive, got ${compactAfterBytes}`);
  mkdirSync(opts.dir, { recursive: true });
  const lock = lockDir(opts.dir);
  let hub: WatchHub | undefined;
  const adapter = new JournalAdapter({
    dir: opts.dir,
    fs: opts.fs ?? nodeStoreFs,
    compactAfterBytes,
    pace: opts.compactionPace,
    logger: log,
    onDurable: (rv) => hub?.publish(rv),
  });
  try {
    const db = new Low<StoreData>(adapter, emptyData());
    await db.read();
    const durableRv = db.data.rv;
    if (adapter.crashed) {
      db.data.rv += FENCE_GAP;
      db.data.unjournaled.push({ rv: db.data.rv, line: markLine(db.data.rv, 'fence') });
      await db.write();
      log({ msg: 'Fenced resourceVersions after a crash', durableRv, rv: db.data.rv });
    }
    const state = new StoreState(db.data);
    hub = new WatchHub({
      capacity,
      startRv: db.data.rv,
      openedAtRv: durableRv,
      logger: log,
      list: (plural, o) => ({ items: state.list(plural, o), resourceVersion: String(db.data.rv) }),
      currentRv: () => db.data.rv,
    });
    return new DurableStore({ db, adapter, hub, state, lock, log, maxUndurable });
  } catch (e) {
    await adapter.close().catch(() => {});
    lock.release();
    throw e;
  }
}
