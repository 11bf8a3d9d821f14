/**
 * The agent's own durable store (ADR 0045: owned by the agent alone): the same journaled store as the
 * control plane's (`openStore` on `<state-dir>/store`), holding agent-private records — the last
 * Declaration received, the owned inventory, identity and connection settings, and the outbox of what
 * has not been reported yet — behind typed accessors. Every write resolves once it is on disk.
 *
 * Opening refuses a damaged store rather than starting from less than it held: a corrupt journal or
 * snapshot (the store names the file), a store below its watermark (truncated or rolled back), a
 * damaged record, or owned resources without a declaration. An agent must never start from an empty
 * declaration that would remove everything it owns.
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, storeLogTo, type FileStore } from '../../api/store/index.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import type { InventoryChange } from '../engine/reconciler.ts';
import type { InventoryEntry, Logger } from '../engine/types.ts';
import { checkInventoryRecord, opsFor, orderInventory, type InventoryRecord } from './inventory-records.ts';
import {
  checkDeclaration,
  PLURAL,
  unwrap,
  wrap,
  type AgentIdentity,
  type ConnectionState,
  type HeldMaterial,
  type OutboxItem,
  type ReceivedDeclaration,
} from './records.ts';
import { createWatermarkWriter, readWatermark, watermarkPath, type WatermarkWriter } from './watermark.ts';
import { createSerial } from '../../api/meta/serial.ts';

export type * from './records.ts';

/** Options of `openAgentStore`. */
export interface AgentStoreOptions {
  /** The agent's state directory; the store lives in `<stateDir>/store`. */
  stateDir: string;
  /** The agent's logger; the store's own lines (open, compaction and its failures) go there too. */
  logger: Logger;
  /** Outbox items kept at most (the oldest are dropped). Default 200. */
  outboxLimit?: number;
}

/** The agent's store, with typed accessors. Reads are synchronous (in memory); writes are durable on resolve. */
export interface AgentStore {
  readonly dir: string;
  identity(): AgentIdentity | undefined;
  saveIdentity(identity: AgentIdentity): Promise<void>;
  connection(): ConnectionState;
  /** Merges `patch` into the connection state (an `undefined` field is removed), at write time. */
  updateConnection(patch: Partial<ConnectionState>): Promise<void>;
  declaration(): ReceivedDeclaration | undefined;
  saveDeclaration(object: Declaration): Promise<void>;
  /** The owned inventory in creation order. */
  inventory(): InventoryEntry[];
  /** Persists one change of the engine's inventory. */
  applyInventoryChange(change: InventoryChange): Promise<void>;
  /** The certificate material the agent holds, by Certificate name. */
  materials(): HeldMaterial[];
  saveMaterial(m: HeldMaterial): Promise<void>;
  deleteMaterial(name: string): Promise<void>;
  outbox(): OutboxItem[];
  /** Adds an item (dropping the oldest beyond the limit); resolves with how many were dropped. */
  enqueue(item: Omit<OutboxItem, 'name'>): Promise<number>;
  dequeue(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Opens the agent's store in `<stateDir>/store`, refusing a damaged one (see the module comment). */
export async function openAgentStore(opts: AgentStoreOptions): Promise<AgentStore> {
  const dir = join(opts.stateDir, 'store');
  // It holds the node's credential and its certificates' private keys: the agent's alone.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  let store: FileStore;
  try {
    store = await openStore({
      dir,
      compactAfterBytes: 4 * 1024 * 1024,
      eventLogCapacity: 16,
      logger: storeLogTo(opts.logger, { component: 'agent-store' }),
    });
  } catch (e) {
    throw new Error(`cannot open the agent store ${dir}: ${(e as Error).message}`);
  }
  try {
    await checkIntegrity(store, opts.stateDir, dir);
    const access = new StoreAccess(store, dir, opts);
    const dropped = await access.dropLeftovers();
    if (dropped.length) opts.logger.info('Finished interrupted inventory take-over', { dropped });
    return access;
  } catch (e) {
    await store.close();
    throw e;
  }
}

async function checkIntegrity(store: FileStore, stateDir: string, dir: string): Promise<void> {
  const mark = await readWatermark(stateDir);
  const rv = Number(store.stats().openedAtRv); // what the files held: an open after a crash fences above it
  if (mark && rv < mark.resourceVersion) {
    throw new Error(
      `the agent store ${dir} is truncated or was rolled back: it holds changes up to resourceVersion ${rv}, ` +
        `but the agent had made changes up to ${mark.resourceVersion} durable (declaration generation ${mark.declarationGeneration ?? 'none'}; ` +
        `recorded in ${watermarkPath(stateDir)}). Refusing to start from it: nothing on this node was changed. ` +
        'Restore the store from a backup; to start over deliberately, remove the store directory and the watermark file.',
    );
  }
  const decls = store.list(PLURAL.declarations).items;
  for (const d of decls) checkDeclaration(unwrap<ReceivedDeclaration>(d), `agent store ${dir}`);
  const owned = store.list(PLURAL.inventory).items;
  for (const o of owned) checkInventoryRecord(o, `agent store ${dir}`);
  if (owned.length > 0 && decls.length === 0) {
    throw new Error(
      `the agent store ${dir} lists ${owned.length} owned resource(s) but no declaration: it is damaged. ` +
        'Refusing to start (an empty declaration would remove everything this node runs).',
    );
  }
}

class StoreAccess implements AgentStore {
  readonly #store: FileStore;
  readonly #opts: AgentStoreOptions;
  readonly #mark: WatermarkWriter;
  readonly #lane = createSerial();
  #nextSeq: number;
  #nextOutbox: number;
  readonly dir: string;

  constructor(store: FileStore, dir: string, opts: AgentStoreOptions) {
    this.#store = store;
    this.#opts = opts;
    this.dir = dir;
    this.#mark = createWatermarkWriter({
      stateDir: opts.stateDir,
      onError: (e) => opts.logger.error('Failed to write store watermark', { error: String(e) }),
    });
    const seqs = store.list(PLURAL.inventory).items.map((o) => (o.spec as InventoryRecord).seq);
    this.#nextSeq = Math.max(0, ...seqs) + 1;
    this.#nextOutbox = Math.max(0, ...this.outbox().map((i) => Number(i.name.slice(2)))) + 1;
  }

  identity(): AgentIdentity | undefined {
    return unwrap(this.#store.get(PLURAL.settings, 'identity'));
  }
  saveIdentity(identity: AgentIdentity): Promise<void> {
    return this.#put(PLURAL.settings, 'AgentIdentity', 'identity', identity);
  }
  connection(): ConnectionState {
    return unwrap<ConnectionState>(this.#store.get(PLURAL.settings, 'connection')) ?? {};
  }
  updateConnection(patch: Partial<ConnectionState>): Promise<void> {
    return this.#put(PLURAL.settings, 'ConnectionState', 'connection', () => ({ ...this.connection(), ...patch }));
  }

  declaration(): ReceivedDeclaration | undefined {
    const items = this.#store.list(PLURAL.declarations).items;
    return unwrap(items[0]);
  }

  async saveDeclaration(object: Declaration): Promise<void> {
    const rec: ReceivedDeclaration = { object, receivedAt: new Date().toISOString() };
    await this.#put(PLURAL.declarations, 'ReceivedDeclaration', 'current', rec);
  }

  inventory(): InventoryEntry[] {
    return orderInventory(this.#store.list(PLURAL.inventory).items).entries;
  }

  async applyInventoryChange(change: InventoryChange): Promise<void> {
    const seqOf = (id: string): number | undefined =>
      unwrap<InventoryRecord>(this.#store.get(PLURAL.inventory, id))?.seq;
    for (const op of opsFor(change, seqOf, () => this.#nextSeq++)) {
      if ('delete' in op) await this.#delete(PLURAL.inventory, op.delete);
      else await this.#put(PLURAL.inventory, 'OwnedResource', op.put, op.record);
    }
  }

  materials(): HeldMaterial[] {
    return this.#store.list(PLURAL.materials).items.map((o) => o.spec as HeldMaterial);
  }
  saveMaterial(m: HeldMaterial): Promise<void> {
    return this.#put(PLURAL.materials, 'HeldMaterial', m.name, m);
  }
  deleteMaterial(name: string): Promise<void> {
    return this.#delete(PLURAL.materials, name);
  }

  outbox(): OutboxItem[] {
    return this.#store
      .list(PLURAL.outbox)
      .items.map((o) => ({ ...(o.spec as Omit<OutboxItem, 'name'>), name: o.metadata.name as string }));
  }

  async enqueue(item: Omit<OutboxItem, 'name'>): Promise<number> {
    const name = `o-${String(this.#nextOutbox++).padStart(12, '0')}`;
    await this.#put(PLURAL.outbox, 'OutboxItem', name, item);
    const items = this.outbox();
    const over = items.slice(0, Math.max(0, items.length - (this.#opts.outboxLimit ?? 200)));
    for (const old of over) await this.#delete(PLURAL.outbox, old.name);
    return over.length;
  }

  dequeue(name: string): Promise<void> {
    return this.#delete(PLURAL.outbox, name);
  }

  async close(): Promise<void> {
    await this.#lane(async () => {}); // every write handed over before close() has settled
    await this.#mark.flush();
    await this.#store.close();
  }

  /** Finishes a take-over interrupted by a crash (see inventory-records.ts); called once after open. */
  async dropLeftovers(): Promise<string[]> {
    const { leftovers } = orderInventory(this.#store.list(PLURAL.inventory).items);
    for (const id of leftovers) await this.#delete(PLURAL.inventory, id);
    return leftovers;
  }

  /** Creates or replaces a record; `spec` may be a function, evaluated when the write runs. */
  #put(plural: string, kind: string, name: string, spec: unknown): Promise<void> {
    return this.#serial(async () => {
      const obj = wrap(kind, name, typeof spec === 'function' ? (spec as () => unknown)() : spec);
      if (this.#store.get(plural, name)) await this.#store.update(plural, obj);
      else await this.#store.create(plural, obj);
    });
  }

  #delete(plural: string, name: string): Promise<void> {
    return this.#serial(async () => {
      if (this.#store.get(plural, name)) await this.#store.delete(plural, name);
    });
  }

  /** Runs store writes one at a time, so that after each the store's resourceVersion is durable (watermark). */
  #serial(fn: () => Promise<void>): Promise<void> {
    return this.#lane(async () => {
      await fn();
      const generation = this.declaration()?.object.metadata.generation;
      this.#mark.advance({
        resourceVersion: Number(this.#store.resourceVersion()),
        ...(generation !== undefined ? { declarationGeneration: generation } : {}),
      });
    });
  }
}
