/**
 * The Assignment controller: keeps each Assignment's status (observedGeneration, the rendered version and
 * the Applied condition) saying whether its node applied it. The decision is pure (assignment-status.ts);
 * this file wires informers, time and the write. It reads only; the Declaration controller renders and
 * writes the Declarations, the node's agent writes their status, and this controller writes nothing else
 * than Assignment status, through `/status`, and only when it changed — and an Event when Applied changed
 * status or reason (assignment-events.ts), which `meshctl describe assignment` shows.
 *
 * The key is an assignment name. An Assignment maps to itself; a Node or a Declaration (named after its
 * node) to the assignments of that node, so the agent's report on the Declaration updates them; a Module to
 * the assignments that use it. Reads come from the informers' caches; the write carries the cached
 * resourceVersion, so a stale cache ends in a Conflict, which is thrown and retried with backoff.
 *
 * The status describes the node's Declaration as stored. So the controller renders the node from the same
 * caches (the pure renderer) and, while the Declaration controller has yet to write that rendering, writes
 * nothing: a status computed then would describe a Declaration about to be replaced (e.g. `Pending` on a
 * generation the node will never be sent) and be rewritten at once. The Declaration's write requeues it.
 *
 * In the control plane it also yields to the Declaration controller (`yieldTo`, see
 * addDeclarationAndAssignmentControllers): while that controller has Declarations to write, no Assignment is
 * reconciled, for at most YIELD_MAX_MS of one busy spell. A change to a module on every node is then written to
 * every Declaration first and the statuses follow, so it reaches the nodes sooner, and an Assignment is reconciled
 * about once instead of at each write of its node's Declaration. At 5,000 nodes (bench/fan-probe.ts, two runs of
 * each interleaved, 5 changes each) the per-node applied p99 was 6.6–8.8 s (mean 7.6) instead of 7.8–12.2 s (9.4).
 */
import type { Client } from '../api/client/types.ts';
import { findCondition } from '../api/meta/conditions.ts';
import type { Logger } from '../api/meta/logger.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { Assignment, Declaration, Event, Module, Node } from '../api/v1alpha1/generated/index.ts';
import { appliedEvent } from './assignment-events.ts';
import { declarationToWrite, recordBehindModule, type OwnerOutcome } from '../api/v1alpha1/render-declaration.ts';
import { APPLIED, assignmentStatus, statusDiffers } from './assignment-status.ts';
import { realClock, type Clock } from '../api/meta/clock.ts';
import { rfc3339 } from '../api/meta/timestamp.ts';
import { createController, type Controller, type Reconciler } from './runtime/controller.ts';
import type { WorkQueue } from '../api/client/work-queue.ts';
import type { Informer } from '../api/client/informer.ts';
import { informersFor, type ControllerOptions, type Informers, type Manager } from './runtime/manager.ts';
import { createDeclarationController } from './declaration-controller.ts';
import { addCacheIndexes, BY_MODULE, BY_NODE, namesOf } from './cache-indexes.ts';
import { renderNode } from './node-rendering.ts';
import { nodeRenderInputsChanged } from './render-inputs.ts';

/** Options of createAssignmentController. */
export interface AssignmentControllerOptions extends ControllerOptions {
  /** The Declaration controller's queue: no Assignment is reconciled while it is busy (see createController). */
  yieldTo?: WorkQueue;
}

/** The informers the controller reads from. */
type Caches = Informers<'nodes' | 'assignments' | 'modules' | 'declarations' | 'meshes' | 'routes'>;

/** Creates the Assignment controller; add it to the manager, which starts it once the caches are synced. */
export function createAssignmentController(opts: AssignmentControllerOptions): Controller {
  const { manager } = opts;
  const clock = opts.clock ?? realClock;
  const caches: Caches = informersFor(manager, ['assignments', 'nodes', 'modules', 'declarations', 'meshes', 'routes']);
  addCacheIndexes(caches);
  const reconciler = new AssignmentReconciler({ client: manager.client, caches, logger: manager.logger, clock });
  const ofNode = (obj: KubeObject): string[] => assignmentsOfNode(obj.metadata.name ?? '', caches.assignments);
  return createController({
    name: 'assignment',
    reconciler,
    workers: opts.workers ?? ASSIGNMENT_WORKERS,
    clock,
    yieldTo: opts.yieldTo,
    logger: manager.logger,
    sources: [
      { informer: caches.assignments },
      { informer: caches.declarations, keys: ofNode },
      // A heartbeat changes nothing an Assignment's status is computed from.
      {
        informer: caches.nodes,
        keys: (obj, type, old) =>
          nodeRenderInputsChanged(type, obj as Node, old as Node | undefined) ? ofNode(obj) : [],
      },
      { informer: caches.modules, keys: (obj) => assignmentsOfModule(obj.metadata.name ?? '', caches.assignments) },
    ],
  });
}

/**
 * Adds the Declaration controller, and this one yielding to it, as the control plane runs them (controllers/main.ts;
 * the end-to-end controller tests run the same pair: test/e2e/controllers-harness.ts). Returns the Declaration
 * controller, whose queue the Node controller yields to as well.
 */
export function addDeclarationAndAssignmentControllers(manager: Manager): Controller {
  const declarations = createDeclarationController({ manager });
  manager.add(declarations);
  manager.add(createAssignmentController({ manager, yieldTo: declarations.queue }));
  return declarations;
}

/**
 * Keys reconciled at once: when a module used by every node changes, every Assignment's status is written
 * (Pending, then Applied) and many writes in flight share one fdatasync of the store's group commit.
 */
export const ASSIGNMENT_WORKERS = 32;

/** The assignments to node `node` (the keys to reconcile when its Node or Declaration changed). */
export function assignmentsOfNode(node: string, assignments: Pick<Informer<Assignment>, 'byIndex'>): string[] {
  return namesOf(assignments.byIndex(BY_NODE, node));
}

/** The assignments of module `module` (the keys to reconcile when the Module changed). */
export function assignmentsOfModule(module: string, assignments: Pick<Informer<Assignment>, 'byIndex'>): string[] {
  return namesOf(assignments.byIndex(BY_MODULE, module));
}

/**
 * True when the node's Declaration records another version of the assignment's module than the module's current
 * one, which the assignment follows (recordBehindModule): the Declaration controller has yet to write that version,
 * and its write requeues the assignment. False for a node, Declaration or module missing or being deleted.
 */
export function moduleVersionUnrendered(
  assignment: Assignment,
  caches: {
    nodes: Pick<Informer<Node>, 'get'>;
    modules: Pick<Informer<Module>, 'get'>;
    declarations: Pick<Informer<Declaration>, 'get'>;
  },
): boolean {
  if (assignment.metadata.deletionTimestamp) return false;
  const node = caches.nodes.get(assignment.spec.node);
  const declaration = caches.declarations.get(assignment.spec.node);
  const module = caches.modules.get(assignment.spec.module);
  if (!node || node.metadata.deletionTimestamp || !declaration || declaration.metadata.deletionTimestamp || !module)
    return false;
  return recordBehindModule(assignment, module, declaration);
}

/** Reconciles one assignment: computes its status from its node's Declaration and writes it if it changed. */
class AssignmentReconciler implements Reconciler {
  private readonly client: Client;
  private readonly caches: Caches;
  private readonly logger: Logger;
  private readonly clock: Clock;

  constructor(opts: { client: Client; caches: Caches; logger: Logger; clock: Clock }) {
    this.client = opts.client;
    this.caches = opts.caches;
    this.logger = opts.logger;
    this.clock = opts.clock;
  }

  async reconcile(name: string): Promise<void> {
    const cached = this.caches.assignments.get(name);
    if (!cached) return;
    const assignment = cached;
    const nodeName = assignment.spec.node;
    // The same answer as the rendering's below, without rendering: a module's new version reaches every node at once.
    if (moduleVersionUnrendered(assignment, this.caches)) return;
    const rendered = renderNode(nodeName, this.caches);
    const declaration = rendered?.declaration ?? this.caches.declarations.get(nodeName);
    let outcome: OwnerOutcome | undefined; // none without its Node (or while it is deleted): NodeNotFound
    if (rendered) {
      const { node, rendering } = rendered;
      // The Declaration controller has yet to write this rendering: look again once it has (its write requeues this key).
      if (!declaration?.metadata.deletionTimestamp && declarationToWrite({ node, rendering, current: declaration }))
        return;
      outcome = rendering.outcomes.find((o) => o.owner === name);
    }
    const now = rfc3339(this.clock.now());
    const status = assignmentStatus({ assignment, outcome, declaration, now });
    if (!statusDiffers(assignment, status)) return;
    await this.client.updateStatus('assignments', { ...assignment, status });
    await this.record(appliedEvent(assignment, status, now));
    const applied = findCondition(status.conditions, APPLIED);
    this.logger.info('Updated Assignment status', {
      assignment: name,
      node: nodeName,
      applied: applied?.status,
      reason: applied?.reason,
    });
  }

  /** Creates the event, if any; a failure is logged, not retried (the status it reports is written). */
  private async record(event: Event | undefined): Promise<void> {
    if (!event) return;
    await this.client.create('events', event).catch((e: unknown) =>
      this.logger.error('Failed to record Event', {
        assignment: event.involvedObject.name,
        reason: event.reason,
        error: (e as Error).message,
      }),
    );
  }
}
