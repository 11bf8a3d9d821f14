/**
 * Opening the durable store: the directory lock, lowdb over the journal adapter, the indexed state and
 * the watch hub, wired together.
 */
import { mkdirSync } from 'node:fs';
import { Low } from 'lowdb';
import { DurableStore, type FileStore } from './file-store.ts';
import { JournalAdapter } from './journal-adapter.ts';
import { lockDir } from './lock.ts';
import { StoreState } from './state.ts';
import { emptyData, type StoreData } from './store-data.ts';
import type { StoreLogger } from './store-log.ts';
import { WatchHub } from './watch-hub.ts';

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
}

/**
 * Opens (or creates) the durable store in `opts.dir`: takes the directory lock, loads the snapshot and
 * replays the journal. Throws when another process holds the store or when its files are damaged.
 */
export async function openStore(opts: OpenStoreOptions): Promise<FileStore> {
  const log = opts.logger ?? (() => {});
  const capacity = opts.eventLogCapacity ?? 10_000;
  const compactAfterBytes = opts.compactAfterBytes ?? 64 * 1024 * 1024;
  if (!Number.isSafeInteger(capacity) || capacity < 1) throw new Error(`eventLogCapacity must be a positive integer, got ${capacity}`);
  if (!(compactAfterBytes > 0)) throw new Error(`compactAfterBytes must be positive, got ${compactAfterBytes}`);
  mkdirSync(opts.dir, { recursive: true });
  const lock = lockDir(opts.dir);
  let hub: WatchHub | undefined;
  const adapter = new JournalAdapter({ dir: opts.dir, compactAfterBytes, logger: log, onDurable: (rv) => hub?.publish(rv) });
  try {
    const db = new Low<StoreData>(adapter, emptyData());
    await db.read();
    const state = new StoreState(db.data);
    hub = new WatchHub({
      capacity, startRv: db.data.rv, logger: log,
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
