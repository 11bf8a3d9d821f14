/**
 * Node heartbeats as a lease, the way Kubernetes moved node heartbeats to Leases: a node's status write that
 * changes nothing but `status.controlPlaneLastContact` (what the agent's heartbeat sends every interval) is
 * recorded here, in memory, and answered without a store write — so no journal write, no watch event, and no
 * controller woken for it. The heartbeat is persisted (written through, with `status.lastSeen` set to the time
 * this process observed it) when it is the node's first one this process saw, when the write changes more than
 * the contact time, or once the last persisted one is a persist interval old: 30 s, or longer in a large mesh so that at most `maxPersistPerSecond` (25) of
 * them are written a second (5,000 nodes: every 200 s). Such a periodic persist waits for the next batch
 * (PERSIST_BATCH_MS, 1 s): the persists due within it are written in one turn of the event loop and share one group
 * commit of the journal instead of an fdatasync and a wake-up of the event loop each. Any other change in the
 * status is written at once, as before. So after a SIGKILL the stored `lastSeen` is stale by at most one persist
 * interval plus one heartbeat interval and one batch, and, being this process's own observation (the time the
 * heartbeat arrived, not the time its batch was written), never in the future. A node's first persist
 * counts as made up to half an interval earlier (a random part), so that nodes heard first together (all of
 * them, after a restart) come due spread over half an interval rather than all within one heartbeat
 * interval, again every persist interval.
 *
 * A heartbeat whose `declaration.appliedGeneration` is new to the Node but already reported by the node's
 * Declaration status counts as changing only the contact time: the Node controller raises the stored one to the
 * Declaration's (controllers/node-controller.ts), and the agent reports an apply there first. Otherwise every
 * heartbeat that arrives between an apply and the controller's write would be a Node write of its own (a third
 * of the nodes in a change applied on 2,000, two thirds on 5,000: bench/fan-probe.ts).
 *
 * Listeners (`onBeat`) hear every heartbeat, absorbed or written — the Node controller takes reachability
 * from them (controllers/node-controller.ts) — and every other request the node's credential made (`contact`: a
 * log POST, its Declaration's status, an Event, its watch): each shows the node alive as a heartbeat does, and the
 * agent skips a heartbeat that would only repeat what the control plane has after such a request (agent/sync/sync.ts).
 * Those are not persisted: the agent still writes a heartbeat at least every other interval, and that one is.
 */
import { jsonEqual } from '../../meta/json-equal.ts';
import { realClock, type Clock } from '../../meta/clock.ts';
import { rfc3339 } from '../../meta/timestamp.ts';
import type { KubeObject } from '../../meta/types.ts';
import type { Store } from '../../store/types.ts';

/** The shortest persist interval (a small mesh). */
export const LEASE_PERSIST_MS = 30_000;
/** At most this many heartbeats are persisted a second, however large the mesh (the interval grows instead). */
export const MAX_PERSIST_PER_SECOND = 25;
/**
 * A heartbeat due to be persisted waits up to this long, so that the persists due meanwhile go to the store in one
 * turn of the event loop and share the journal's group commit (one write and fdatasync instead of one each).
 */
export const PERSIST_BATCH_MS = 1000;

/** The persist interval of a mesh of `nodes` (see the module comment): `persistMs`, or longer so that at most `maxPerSecond` are persisted a second. */
export function persistInterval(
  nodes: number,
  persistMs = LEASE_PERSIST_MS,
  maxPerSecond = MAX_PERSIST_PER_SECOND,
): number {
  return Math.max(persistMs, (nodes * 1000) / maxPerSecond);
}

/** Options of `NodeLeases`. */
export interface NodeLeasesOptions {
  clock?: Clock;
  /** Default LEASE_PERSIST_MS. */
  persistMs?: number;
  /** Default MAX_PERSIST_PER_SECOND. */
  maxPersistPerSecond?: number;
  /** A number in [0, 1): how far back a node's first persist is dated (see the module comment). Default Math.random. */
  random?: () => number;
  /** Default PERSIST_BATCH_MS; 0 writes each persist at once. */
  batchMs?: number;
}

/** Called with the node's name and the time (ms, this process's clock) its heartbeat arrived. */
export type BeatListener = (node: string, atMs: number) => void;

type Status = Record<string, unknown> & { controlPlaneLastContact?: unknown };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const statusOf = (o: KubeObject | undefined): Status | undefined => (isRecord(o?.status) ? o.status : undefined);

/**
 * True when a heartbeat's `declaration` (`after`) differs from the stored one (`before`) only in raising
 * appliedGeneration to `reported`, the one the node's Declaration status holds.
 */
export function onlyAppliedReported(before: unknown, after: unknown, reported: unknown): boolean {
  if (!isRecord(before) || !isRecord(after) || typeof reported !== 'number') return false;
  const was = before.appliedGeneration;
  if (after.appliedGeneration !== reported || (typeof was === 'number' && was > reported)) return false;
  const { appliedGeneration: _before, ...restBefore } = before;
  const { appliedGeneration: _after, ...restAfter } = after;
  return jsonEqual(restBefore, restAfter);
}

/** The heartbeat lease of every node, kept by the API server (see the module comment). */
export class NodeLeases {
  private readonly clock: Clock;
  private readonly persistMs: number;
  private readonly maxPerSecond: number;
  private readonly random: () => number;
  private readonly batchMs: number;
  /** Resolves when the persists waiting for the current batch are to be written. */
  private batch?: Promise<void>;
  /** Per node: when its heartbeat was last persisted (ms). */
  private readonly persistedAt = new Map<string, number>();
  private readonly listeners: BeatListener[] = [];

  constructor(opts: NodeLeasesOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.persistMs = opts.persistMs ?? LEASE_PERSIST_MS;
    this.maxPerSecond = opts.maxPersistPerSecond ?? MAX_PERSIST_PER_SECOND;
    this.random = opts.random ?? Math.random;
    this.batchMs = opts.batchMs ?? PERSIST_BATCH_MS;
  }

  /** The persist interval now: the configured one, or longer so that the mesh persists at most the maximum rate. */
  interval(): number {
    return persistInterval(this.persistedAt.size, this.persistMs, this.maxPerSecond);
  }

  /** Adds a listener of every heartbeat. */
  onBeat(fn: BeatListener): void {
    this.listeners.push(fn);
  }

  /**
   * Takes a node's status write (`obj`, the Node as it would be stored) before the store does: a heartbeat
   * that need not be persisted is recorded and answered here (the stored Node with the new contact time, its
   * resourceVersion unchanged); one due for persisting is heard at once and goes to the store with its batch;
   * any other write carrying a valid contact time goes to the store at once with `lastSeen` set, and counts as
   * persisted; a write without one goes to the store as it is.
   */
  async update<T extends KubeObject>(store: Store, obj: T, write: (obj: T) => Promise<T>): Promise<T> {
    const name = obj.metadata?.name ?? '';
    const stored = store.get('nodes', name);
    const contact = statusOf(obj)?.controlPlaneLastContact;
    if (!stored || typeof contact !== 'string' || Number.isNaN(Date.parse(contact))) return write(obj);
    const now = this.clock.now();
    const last = this.persistedAt.get(name);
    const onlyContact = last !== undefined && this.onlyContact(store, stored, obj);
    if (onlyContact && now - last < this.interval()) {
      this.beat(name, now);
      return { ...stored, status: { ...statusOf(stored), controlPlaneLastContact: contact } } as T;
    }
    // A periodic persist waits for its batch (heard meanwhile); a node's first heartbeat and a change are written at once.
    const batched = onlyContact && this.batchMs > 0;
    if (batched) {
      this.beat(name, now);
      await this.nextBatch();
    }
    const written = await write({ ...obj, status: { ...statusOf(obj), lastSeen: rfc3339(now) } });
    this.persistedAt.set(name, last === undefined ? now - (this.random() * this.interval()) / 2 : now);
    if (!batched) this.beat(name, now);
    return written;
  }

  /** The next batch of persists (see PERSIST_BATCH_MS): one timer for all that wait. */
  private nextBatch(): Promise<void> {
    this.batch ??= new Promise<void>((resolve) =>
      this.clock.setTimeout(() => {
        this.batch = undefined;
        resolve();
      }, this.batchMs),
    );
    return this.batch;
  }

  /**
   * True when `obj` differs from `stored` only in its controlPlaneLastContact, and in an appliedGeneration the
   * Declaration status already reports (see the module comment), and names its version, if any: field by field,
   * without copying either status (this runs for every heartbeat).
   */
  private onlyContact(store: Store, stored: KubeObject, obj: KubeObject): boolean {
    const rv = obj.metadata?.resourceVersion;
    if (rv !== undefined && rv !== stored.metadata?.resourceVersion) return false;
    const before = statusOf(stored) ?? {};
    const after = statusOf(obj) ?? {};
    let fields = 0;
    for (const key of Object.keys(after)) {
      if (key === 'controlPlaneLastContact') continue;
      fields++;
      if (!Object.hasOwn(before, key)) return false;
      if (jsonEqual(before[key], after[key])) continue;
      if (key !== 'declaration') return false;
      const reported = statusOf(store.get('declarations', obj.metadata?.name ?? ''))?.appliedGeneration;
      if (!onlyAppliedReported(before[key], after[key], reported)) return false;
    }
    for (const key of Object.keys(before)) if (key !== 'controlPlaneLastContact') fields--;
    return fields === 0;
  }

  /** Any other request of the node (see the module comment): heard by the listeners now, not persisted. */
  contact(name: string): void {
    this.beat(name, this.clock.now());
  }

  private beat(name: string, at: number): void {
    for (const fn of this.listeners) fn(name, at);
  }
}
