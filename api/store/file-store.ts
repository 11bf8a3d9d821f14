/**
 * The `Store` contract (types.ts) over lowdb: `Low<StoreData>` is the typed document holding the whole state
 * in memory, and its JournalAdapter makes `db.write()` durable. A write names the object and separates
 * status from spec (object-meta.ts), runs the caller's `admit` check, changes the in-memory state
 * synchronously (so optimistic concurrency is checked against the newest state), stages its journal line
 * (in `db.data.unjournaled`) and watch events, and resolves only once `db.write()` has made it durable;
 * watchers see it only then. Reads see the newest state, which may include writes whose fdatasync is still
 * in flight (at most one group commit old); a crash then loses them, and the next open fences their
 * resourceVersions so none is issued again (index.ts). If the journal ever fails to write, the store refuses every
 * later write until it is reopened. index.ts has the whole path of a write.
 */
import { jsonEqual } from '../meta/json-equal.ts';
import type { Low } from 'lowdb';
import { ApiError } from '../meta/api-error.ts';
import { rfc3339 } from '../meta/timestamp.ts';
import type { KubeObject } from '../meta/types.ts';
import type { ObjectOf } from '../v1alpha1/generated/resources.ts';
import type { CreateOptions, DeleteOptions, ListOptions, Store, UpdateOptions, Watch, WatchOptions } from './types.ts';
import { markDeleting, orphanDependents, removeObject } from './cascade.ts';
import type { JournalAdapter, JournalStats } from './journal-adapter.ts';
import type { DirLock } from './lock.ts';
import {
  addedFinalizers,
  generatedName,
  hasFinalizers,
  mergeUpdate,
  stampCreate,
  withGeneration,
  withMeta,
} from './object-meta.ts';
import { Txn, type StoreState } from './state.ts';
import type { StoreData } from './store-data.ts';
import type { SerializedWatchEvent } from './store-event.ts';
import type { Snapshot } from './snapshot.ts';
import type { StoreLogger } from './store-log.ts';
import type { WatchHub } from './watch-hub.ts';
import type { WatchSnapshot, WatchSnapshotStats } from './watch-snapshots.ts';

/** What `stats()` reports: sizes, journal and compaction counters, watch state. */
export interface StoreStats {
  resourceVersion: string;
  /** The durable resourceVersion the store held when opened, before the fence of an open after a crash (index.ts). */
  openedAtRv: string;
  objects: number;
  kinds: Record<string, number>;
  journal: JournalStats;
  watchers: number;
  eventLog: { size: number; capacity: number; resumableFrom: number };
  watchSnapshots: WatchSnapshotStats;
}

/**
 * The store returned by `openStore`: the Store contract, with watch events that carry their serialized
 * `json` line (serialize once per change, not once per watcher), plus `stats()`.
 */
export interface FileStore extends Store {
  watch(plural: string, opts: WatchOptions, onEvent: (e: SerializedWatchEvent) => void): Watch;
  stats(): StoreStats;
  /**
   * A consistent cut for a backup: every object at one resourceVersion, taken synchronously from the in-memory
   * state (each write is wholly in it or not at all), resolved once everything in it is durable.
   */
  snapshot(): Promise<Snapshot>;
}

const CONFLICT = 'the object has been modified; please apply your changes to the latest version and try again';

function invalidName(input: KubeObject, why: string, reason?: string): ApiError {
  return ApiError.invalid(input.kind ?? 'object', '', [
    { field: 'metadata.name', ...(reason ? { reason } : {}), message: why },
  ]);
}

/**
 * The caller's object, checked, as a shallow copy (never mutated; the store's own deep copy is made when it
 * is stored, by serializing it once for the journal and parsing that back).
 */
function checkObject(obj: unknown): KubeObject {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
    throw ApiError.badRequest('the object must be a JSON object');
  const input = { ...(obj as KubeObject) };
  input.metadata ??= {};
  if (typeof input.metadata !== 'object' || Array.isArray(input.metadata))
    throw ApiError.badRequest('metadata must be an object');
  return input;
}

/**
 * The Store implementation (construct it with `openStore`). It holds KubeObjects; the typed reads and writes
 * say that an object stored under a plural is of that plural's type (every write to a plural is of its kind).
 */
export class DurableStore implements FileStore {
  readonly #db: Low<StoreData>;
  readonly #adapter: JournalAdapter;
  readonly #state: StoreState;
  readonly #hub: WatchHub;
  readonly #lock: DirLock;
  readonly #log: StoreLogger;
  readonly #maxUndurable: number;
  #closed = false;
  #failed?: unknown;

  constructor(opts: {
    db: Low<StoreData>;
    adapter: JournalAdapter;
    hub: WatchHub;
    state: StoreState;
    lock: DirLock;
    log: StoreLogger;
    /** Refuse writes while this many issued resourceVersions are not durable yet (index.ts: the fence). */
    maxUndurable: number;
  }) {
    this.#db = opts.db;
    this.#adapter = opts.adapter;
    this.#hub = opts.hub;
    this.#state = opts.state;
    this.#lock = opts.lock;
    this.#log = opts.log;
    this.#maxUndurable = opts.maxUndurable;
  }

  resourceVersion(): string {
    return String(this.#db.data.rv);
  }

  get<P extends string>(plural: P, name: string): ObjectOf<P> | undefined {
    return this.#state.get(plural, name) as ObjectOf<P> | undefined;
  }

  list<P extends string>(plural: P, opts?: ListOptions): { items: ObjectOf<P>[]; resourceVersion: string } {
    return { items: this.#state.list(plural, opts) as ObjectOf<P>[], resourceVersion: this.resourceVersion() };
  }

  create<P extends string>(plural: P, obj: ObjectOf<P>, opts: CreateOptions = {}): Promise<ObjectOf<P>> {
    return this.#create(plural, obj, opts) as Promise<ObjectOf<P>>;
  }

  update<P extends string>(plural: P, obj: ObjectOf<P>, opts: UpdateOptions = {}): Promise<ObjectOf<P>> {
    return this.#update(plural, obj, opts) as Promise<ObjectOf<P>>;
  }

  async #create(plural: string, obj: KubeObject, opts: CreateOptions): Promise<KubeObject> {
    this.#writable();
    const input = checkObject(obj);
    const name = this.#nameFor(plural, input);
    const created = stampCreate(input, name);
    opts.admit?.(created);
    if (this.#state.get(plural, name)) throw ApiError.alreadyExists(plural, name);
    if (opts.dryRun) return created;
    const txn = new Txn();
    const stored = this.#state.put(txn, plural, created, 'ADDED');
    await this.#commit(txn);
    return stored;
  }

  #nameFor(plural: string, input: KubeObject): string {
    const { name, generateName } = input.metadata;
    if (name !== undefined && name !== '') {
      if (typeof name !== 'string') throw invalidName(input, 'Invalid value: must be a string');
      return name;
    }
    if (typeof generateName !== 'string' || generateName === '') {
      throw invalidName(input, 'Required value: name or generateName is required', 'FieldValueRequired');
    }
    for (let i = 0; i < 16; i++) {
      const candidate = generatedName(generateName);
      if (!this.#state.get(plural, candidate)) return candidate;
    }
    throw ApiError.alreadyExists(plural, `${generateName}*`);
  }

  async #update(plural: string, obj: KubeObject, opts: UpdateOptions): Promise<KubeObject> {
    this.#writable();
    const input = checkObject(obj);
    const name = input.metadata.name;
    if (typeof name !== 'string' || name === '') throw invalidName(input, 'Required value: name is required');
    const stored = this.#state.get(plural, name);
    if (!stored) throw ApiError.notFound(plural, name);
    let next = mergeUpdate(stored, input, opts.subresource);
    opts.admit?.(next);
    const expected = input.metadata.resourceVersion;
    if (expected !== undefined && expected !== '' && expected !== stored.metadata.resourceVersion) {
      throw ApiError.conflict(plural, name, CONFLICT);
    }
    const added = addedFinalizers(stored, next);
    if (stored.metadata.deletionTimestamp && added.length > 0) {
      throw ApiError.invalid(input.kind ?? plural, name, [
        {
          field: 'metadata.finalizers',
          message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
        },
      ]);
    }
    next = withGeneration(stored, next);
    if (jsonEqual(next, stored)) {
      // Nothing to write, but what was read may be another request's write still being made durable.
      if (!opts.dryRun) await this.#durable();
      return stored;
    }
    const finishing = stored.metadata.deletionTimestamp !== undefined && !hasFinalizers(next);
    if (opts.dryRun) return next;
    const txn = new Txn();
    const result = finishing
      ? removeObject(this.#state, txn, plural, next, 'Background')
      : this.#state.put(txn, plural, next, 'MODIFIED');
    await this.#commit(txn);
    return result;
  }

  async delete(plural: string, name: string, opts: DeleteOptions = {}): Promise<KubeObject> {
    this.#writable();
    const stored = this.#state.get(plural, name);
    if (!stored) throw ApiError.notFound(plural, name);
    this.#checkPreconditions(plural, stored, opts);
    const txn = new Txn();
    if (hasFinalizers(stored)) {
      if (opts.dryRun)
        return stored.metadata.deletionTimestamp ? stored : withMeta(stored, { deletionTimestamp: rfc3339() });
      const marked = markDeleting(this.#state, txn, plural, stored);
      if (opts.propagationPolicy === 'Orphan' && stored.metadata.uid)
        orphanDependents(this.#state, txn, stored.metadata.uid);
      await this.#commit(txn);
      return marked;
    }
    if (opts.dryRun) return stored;
    const gone = removeObject(this.#state, txn, plural, stored, opts.propagationPolicy);
    await this.#commit(txn);
    return gone;
  }

  #checkPreconditions(plural: string, stored: KubeObject, opts: DeleteOptions): void {
    const m = stored.metadata;
    if (opts.uid !== undefined && opts.uid !== m.uid) {
      throw ApiError.conflict(
        plural,
        m.name as string,
        `Precondition failed: UID in precondition: ${opts.uid}, UID in object meta: ${m.uid}`,
      );
    }
    if (opts.resourceVersion !== undefined && opts.resourceVersion !== m.resourceVersion) {
      throw ApiError.conflict(
        plural,
        m.name as string,
        `Precondition failed: ResourceVersion in precondition: ${opts.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion}`,
      );
    }
  }

  watch(plural: string, opts: WatchOptions, onEvent: (e: SerializedWatchEvent) => void): Watch {
    return this.#hub.watch(plural, opts, onEvent);
  }

  watchSnapshot(plural: string): Promise<WatchSnapshot> {
    return this.#hub.snapshot(plural);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#adapter.close();
    } finally {
      this.#lock.release();
      this.#log({ msg: 'Closed store', rv: this.#db.data.rv });
    }
  }

  stats(): StoreStats {
    const kinds = this.#state.counts();
    const objects = Object.values(kinds).reduce((a, b) => a + b, 0);
    return {
      resourceVersion: this.resourceVersion(),
      openedAtRv: String(this.#hub.openedAtRv),
      objects,
      kinds,
      journal: this.#adapter.stats(),
      ...this.#hub.stats(),
    };
  }

  async snapshot(): Promise<Snapshot> {
    const rv = this.#db.data.rv;
    const kinds: Snapshot['kinds'] = new Map();
    for (const [plural, kind] of this.#db.data.kinds) kinds.set(plural, new Map(kind)); // objects are immutable
    await this.#durable();
    return { rv, kinds };
  }

  #writable(): void {
    if (this.#closed) throw new ApiError({ reason: 'ServiceUnavailable', message: 'the store is closed' });
    if (this.#failed !== undefined) {
      throw new ApiError({
        reason: 'InternalError',
        message: `the store failed to persist a write and refuses writes until restarted: ${String(this.#failed)}`,
      });
    }
    if (this.#db.data.rv - this.#hub.durableRv >= this.#maxUndurable) {
      throw new ApiError({
        reason: 'ServiceUnavailable',
        message: `${this.#maxUndurable} writes are waiting for the disk; try again later`,
      });
    }
  }

  /**
   * lowdb's `db.write()`: the JournalAdapter appends the lines staged in `db.data.unjournaled` and resolves
   * once they, and every line appended before them, are fdatasync'd. With nothing staged it waits for what
   * is in flight: whatever state a caller has read is durable when it resolves.
   */
  #durable(): Promise<void> {
    return this.#db.write();
  }

  /** Journals one operation (staging its line in db.data, its events in the hub) and waits until durable. */
  async #commit(txn: Txn): Promise<void> {
    if (txn.lines.length === 0) {
      await this.#durable(); // nothing new: wait until what this answer reflects is durable
      return;
    }
    this.#db.data.unjournaled.push(txn.entry());
    this.#hub.stage(txn.events);
    try {
      await this.#durable();
    } catch (e) {
      this.#failed ??= e instanceof Error ? e.message : e;
      this.#log({ msg: 'Failed to persist a write', level: 'error', error: String(this.#failed) });
      throw new ApiError({
        reason: 'InternalError',
        message: `the store could not persist the change: ${String(this.#failed)}`,
      });
    }
  }
}
