/**
 * The Node controller: keeps each Node's status saying whether the control plane hears from the node
 * (condition Reachable, `reachable`, `since`, `lastSeen`) and whether it has applied the newest generation
 * of its Declaration (condition DeclarationApplied, `declaration.desiredGeneration`). The decisions are
 * pure (node-reachability.ts); this file wires informers, time and writes.
 *
 * Who writes what in Node.status: the agent's heartbeat writes controlPlaneLastContact, agentVersion,
 * declaration.appliedGeneration and overlay's publicKey, interface, peers and message (merge patch); the
 * overlay controller writes overlay.address (overlay-controller.ts; a node's own writes keep it); this controller writes lastSeen — the control plane's time
 * of the heartbeat it observed, never the agent's clock — reachable, since, observedGeneration,
 * declaration.desiredGeneration (from the Declaration, known even while the node is down) and its two
 * conditions. It also raises declaration.appliedGeneration to the Declaration status's appliedGeneration
 * (appliedGeneration in node-reachability.ts): the agent reports an apply there at once and on the Node only
 * with its next heartbeat, which then changes nothing but the contact time (so a change applied on every node
 * costs one Node write per node, the controller's, not the agent's heartbeat besides). It looks again when a
 * reachable node's grace period would run out (requeueAfter), rounded up to the whole second so that the rechecks
 * of many nodes share a timer (RECHECK_SLOT_MS); such a recheck of a node found reachable with nothing to write,
 * whose Node, Declaration and Mesh have not changed since, only asks whether the grace period ran out (in a quiet
 * mesh of 5,000 nodes that is some 160 rechecks a second). It never touches a node's assignments or Declaration: an
 * unreachable node keeps its modules (ADR 0036).
 *
 * lastSeen is kept like a Kubernetes node Lease: the time of the last heartbeat lives in memory
 * (HeartbeatTracker) and decides reachability; the stored lastSeen is rewritten only once it is a persist
 * interval (`lastSeenPersistMs`) behind it, or with a change that is written anyway — so a heartbeat that
 * changes nothing else costs the controller no write, and after a SIGKILL the stored lastSeen is stale by
 * less than one persist interval (and, being an observed time, never in the future). In the control-plane
 * process the heartbeats come from the API server's leases instead (`heartbeats`), and those persist lastSeen.
 *
 * In the control plane it yields to the Declaration controller (`yieldTo`), as the Assignment controller does: while
 * Declarations are being written, no Node is reconciled, for at most YIELD_MAX_MS (15 s) of one busy spell. A change
 * to every node then reaches the nodes before their Node statuses are written, and a node's two status changes (the
 * new desired generation, then the applied one) can collapse into one write. The price: while such a spell lasts,
 * a node that went silent or came back is marked so up to 15 s late (the default grace period is 40 s).
 */
import { jsonEqual } from '../api/meta/json-equal.ts';
import type { Client } from '../api/client/types.ts';
import { findCondition, setCondition } from '../api/meta/conditions.ts';
import type { Condition } from '../api/meta/types.ts';
import type { Logger } from '../api/meta/logger.ts';
import { rfc3339 } from '../api/meta/timestamp.ts';
import type { Declaration, Node, NodeStatus } from '../api/v1alpha1/generated/index.ts';
import {
  appliedGeneration,
  DECLARATION_APPLIED,
  HeartbeatTracker,
  REACHABLE,
  declarationVerdict,
  gracePeriodMs,
  reachabilityVerdict,
  reachableUntil,
  type Verdict,
} from './node-reachability.ts';
import { realClock, type Clock } from '../api/meta/clock.ts';
import { WorkQueue } from '../api/client/work-queue.ts';
import { createController, type Controller, type Reconciler, type Result } from './runtime/controller.ts';
import { informersFor, type ControllerOptions, type Informers } from './runtime/manager.ts';
import { onMeshSpecChange } from './render-inputs.ts';

/** Options of createNodeController. */
export interface NodeControllerOptions extends ControllerOptions {
  /**
   * How far the stored lastSeen may lag the last heartbeat observed (see the module comment). Default: 30 s, or
   * half the grace period when that is shorter.
   */
  lastSeenPersistMs?: number;
  /**
   * The API server's heartbeat leases (api/server/access/node-leases.ts), when this runs in its process: every
   * heartbeat is heard from them, also those that reach no store write. They persist lastSeen themselves, so
   * lastSeenPersistMs then defaults to never (lastSeen is still refreshed by the writes this controller makes).
   */
  heartbeats?: { onBeat(fn: (node: string, atMs: number) => void): void };
  /**
   * The Declaration controller's queue, in the control plane: no Node is reconciled while it is busy, for at most
   * YIELD_MAX_MS of one busy spell (controllers/runtime/controller.ts). See the module comment.
   */
  yieldTo?: WorkQueue;
}

/**
 * The rechecks are rounded up to this (WorkQueueOptions.slotMs): a silent node is marked unreachable less than a
 * second after its grace period ran out, and 5,000 nodes' rechecks arm one timer a second instead of one per node.
 */
export const RECHECK_SLOT_MS = 1000;

/** The default of NodeControllerOptions.lastSeenPersistMs. */
export const LAST_SEEN_PERSIST_MS = 30_000;

/** The informers the controller reads from. */
type Caches = Informers<'nodes' | 'declarations' | 'meshes'>;

/** Creates the Node controller; add it to the manager, which starts it once the caches are synced. */
export function createNodeController(opts: NodeControllerOptions): Controller {
  const { manager } = opts;
  const clock = opts.clock ?? realClock;
  const caches: Caches = informersFor(manager, ['nodes', 'declarations', 'meshes']);
  const heartbeats = new HeartbeatTracker({ now: () => clock.now() });
  caches.nodes.addEventHandler((type, obj) => {
    heartbeats.observe(type, obj.metadata.name ?? '', obj.status?.controlPlaneLastContact);
  });
  const reconciler = new NodeReconciler({
    client: manager.client,
    caches,
    heartbeats,
    logger: manager.logger,
    clock,
    persistMs: opts.lastSeenPersistMs ?? (opts.heartbeats ? Infinity : undefined),
  });
  const controller = createController({
    name: 'node',
    reconciler,
    workers: opts.workers ?? 2,
    clock,
    queue: new WorkQueue({ clock, slotMs: RECHECK_SLOT_MS }),
    ...(opts.yieldTo ? { yieldTo: opts.yieldTo } : {}),
    logger: manager.logger,
    sources: [
      { informer: caches.nodes },
      { informer: caches.declarations },
      // The grace period is the Mesh's: a change of its spec re-decides every node (of its status, none).
      {
        informer: caches.meshes,
        keys: onMeshSpecChange(() => caches.nodes.list().map((n) => n.metadata.name ?? '')),
      },
    ],
  });
  // A heartbeat of a node that is reachable changes nothing to decide now (its recheck finds it); one that
  // is not is news at once.
  opts.heartbeats?.onBeat((name, at) => {
    heartbeats.heard(name, at);
    const reachable = findCondition(caches.nodes.get(name)?.status?.conditions, REACHABLE)?.status;
    if (reachable !== 'True') controller.queue.add(name);
  });
  return controller;
}

/**
 * The last heartbeat, by the control plane's clock: the one this process observed; before it has observed
 * one (just after a start), the stored lastSeen — never later than now, since a node may write its own
 * status and must not vouch for itself.
 */
function lastHeartbeat(heard: number | undefined, lastSeen: string | undefined, now: number): number | undefined {
  if (heard !== undefined) return heard;
  const stored = lastSeen === undefined ? NaN : Date.parse(lastSeen);
  return Number.isNaN(stored) ? undefined : Math.min(stored, now);
}

/**
 * The lastSeen to store: the observed heartbeat `heard` once the stored one is `persistMs` or more behind it (or
 * absent), else the stored one unchanged.
 */
export function lastSeenToStore(
  heard: number | undefined,
  stored: string | undefined,
  persistMs: number,
): string | undefined {
  if (heard === undefined) return stored;
  const at = stored === undefined ? NaN : Date.parse(stored);
  return Number.isNaN(at) || heard - at >= persistMs || heard < at ? rfc3339(heard) : stored;
}

/** What the controller decided for one node, ready to be merged into its status. */
export interface NodeDecision {
  lastSeen?: string;
  reachable: Verdict;
  declaration: Verdict;
  desiredGeneration?: number;
  /** The applied generation to store, when known (see appliedGeneration in node-reachability.ts). */
  appliedGeneration?: number;
  generation: number;
  now: string;
}

/** The node's status with the controller's fields set from `d`; the agent's fields are kept as they are. */
export function nextNodeStatus(status: NodeStatus, d: NodeDecision): NodeStatus {
  const condition = (type: string, v: Verdict): Omit<Condition, 'lastTransitionTime'> => ({
    type,
    status: v.status,
    reason: v.reason,
    message: v.message,
  });
  let conditions = setCondition(status.conditions ?? [], condition(REACHABLE, d.reachable), d.now);
  conditions = setCondition(conditions, condition(DECLARATION_APPLIED, d.declaration), d.now);
  const {
    observedGeneration: _g,
    reachable: _r,
    since: _s,
    lastSeen: _l,
    declaration: current,
    conditions: _c,
    ...agent
  } = status;
  const declaration = { desiredGeneration: d.desiredGeneration, ...current };
  if (d.desiredGeneration === undefined) delete declaration.desiredGeneration;
  else declaration.desiredGeneration = d.desiredGeneration;
  if (d.appliedGeneration !== undefined) declaration.appliedGeneration = d.appliedGeneration;
  const reach = d.reachable.status;
  // In the schema's order: the control plane's view first, then what the agent reports, then conditions.
  return {
    observedGeneration: d.generation,
    ...(reach !== 'Unknown' ? { reachable: reach === 'True' } : {}),
    since: findCondition(conditions, REACHABLE)!.lastTransitionTime,
    ...(d.lastSeen !== undefined ? { lastSeen: d.lastSeen } : {}),
    // Kept when the agent wrote one, even empty: dropping it would rewrite the status at every heartbeat.
    ...(Object.keys(declaration).length > 0 || current !== undefined ? { declaration } : {}),
    ...agent,
    conditions,
  };
}

/** Reconciles one node: decides its reachability and declaration progress, writes the status if it changed. */
class NodeReconciler implements Reconciler {
  private readonly client: Client;
  private readonly caches: Caches;
  private readonly heartbeats: HeartbeatTracker;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly persistMs?: number;
  /**
   * Per node, what its last reconcile read when it found nothing to write and the node reachable: the informers'
   * Node and Declaration (each replaced by a new object at every change) and the Mesh's grace period (the Mesh's
   * status changes every minute, with the recovery clock: that is no news). Until one of them changes, the only
   * news can be time running out, so a recheck (most reconciles of a quiet mesh: every node about twice a grace
   * period) asks only whether the grace period ran out instead of deciding the whole status again.
   */
  private readonly quiet = new Map<string, { node: Node; decl?: Declaration; graceMs: number }>();

  constructor(opts: {
    client: Client;
    caches: Caches;
    heartbeats: HeartbeatTracker;
    logger: Logger;
    clock: Clock;
    persistMs?: number;
  }) {
    this.persistMs = opts.persistMs;
    this.client = opts.client;
    this.caches = opts.caches;
    this.heartbeats = opts.heartbeats;
    this.logger = opts.logger;
    this.clock = opts.clock;
  }

  async reconcile(name: string): Promise<Result | void> {
    const node = this.caches.nodes.get(name);
    if (!node || node.metadata.deletionTimestamp) {
      this.quiet.delete(name);
      return;
    }
    const now = this.clock.now();
    const status = node.status ?? {};
    const heard = this.heartbeats.heardAt(name);
    const mesh = this.caches.meshes.get('mesh');
    const graceMs = gracePeriodMs(mesh);
    const decl = this.caches.declarations.get(name);
    const persistMs = this.persistMs ?? Math.min(LAST_SEEN_PERSIST_MS, graceMs / 2);
    const seen = this.quiet.get(name);
    if (seen && seen.node === node && seen.decl === decl && seen.graceMs === graceMs && heard !== undefined) {
      // Still reachable, and nothing else to store: the full decision below would come to the same.
      const deadline = reachableUntil(heard, this.heartbeats.watchingSince(name) ?? now, graceMs);
      if (now < deadline && lastSeenToStore(heard, status.lastSeen, persistMs) === status.lastSeen)
        return { requeueAfter: Math.max(1, Math.ceil(deadline - now)) };
    }
    this.quiet.delete(name);
    const reach = reachabilityVerdict({
      now,
      graceMs,
      lastHeartbeat: lastHeartbeat(heard, status.lastSeen, now),
      watchingSince: this.heartbeats.watchingSince(name) ?? now,
      previous: findCondition(status.conditions, REACHABLE),
    });
    const applied = appliedGeneration(status.declaration?.appliedGeneration, decl?.status?.appliedGeneration);
    const declaration = declarationVerdict({
      desired: decl?.spec.generation,
      applied,
      reachable: reach.status,
      declarationApplied: findCondition(decl?.status?.conditions, 'Applied'),
      agentHoldsCurrent: decl !== undefined && decl.status?.observedGeneration === decl.metadata.generation,
    });
    const decide = (lastSeen: string | undefined): NodeStatus =>
      nextNodeStatus(status, {
        lastSeen,
        reachable: reach,
        declaration,
        desiredGeneration: decl?.spec.generation,
        appliedGeneration: applied,
        generation: node.metadata.generation ?? 0,
        now: rfc3339(now),
      });
    const lazy = decide(lastSeenToStore(heard, status.lastSeen, persistMs));
    // A write that happens anyway carries the freshest lastSeen.
    if (!jsonEqual(status, lazy)) await this.write(node, decide(lastSeenToStore(heard, status.lastSeen, 0)));
    else if (reach.status === 'True') this.quiet.set(name, { node, decl, graceMs });
    return reach.recheckInMs !== undefined ? { requeueAfter: Math.max(1, Math.ceil(reach.recheckInMs)) } : undefined;
  }

  /** Writes the status through /status with the cached resourceVersion (a stale cache ends in a retried Conflict). */
  private async write(node: Node, next: NodeStatus): Promise<void> {
    await this.client.updateStatus('nodes', { ...node, status: next });
    const before = findCondition(node.status?.conditions, REACHABLE);
    const after = findCondition(next.conditions, REACHABLE);
    if (after && before?.status !== after.status) {
      const msg =
        after.status === 'True'
          ? 'Marked Node reachable'
          : after.status === 'False'
            ? 'Marked Node unreachable'
            : 'Marked Node never seen';
      this.logger.info(msg, {
        node: node.metadata.name,
        reason: after.reason,
        message: after.message,
        lastSeen: next.lastSeen,
      });
    }
  }
}
