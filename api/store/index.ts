/**
 * The control plane's durable store: `openStore` and the types callers use with it.
 * See file-store.ts for the semantics and journal-adapter.ts for how it is persisted.
 */
export { openStore, type OpenStoreOptions } from './open-store.ts';
export type { FileStore, StoreStats } from './file-store.ts';
export type { SerializedWatchEvent } from './store-event.ts';
export type { JournalStats } from './journal-adapter.ts';
export { storeLogTo, type StoreLogger, type StoreLogLine } from './store-log.ts';
export type * from './types.ts';
