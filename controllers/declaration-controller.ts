/**
 * The Declaration controller: keeps, for every Node, a Declaration named after it holding the ordered
 * resources of the modules assigned to it (rendering: api/v1alpha1/render-declaration.ts), then those of its
 * Routes (api/v1alpha1/render-routes.ts). It writes
 * Declarations only; whether a node applied an Assignment is the Assignment controller's to report
 * (assignment-controller.ts).
 *
 * The key is a node name. Nodes and Declarations map to their own name; an Assignment to its node and to
 * every node whose Declaration still records it as an owner (so moving or deleting an assignment also
 * re-renders the node it left); a Route likewise; a Module to the nodes of the assignments that use it. Reads come from the
 * informers' caches, through their indexes (cache-indexes.ts: one node's objects, never a scan of all N), and
 * changes that cannot change a rendering (a heartbeat, an agent's status report, an Assignment's status:
 * render-inputs.ts) queue nothing;
 * every write carries the cached resourceVersion, so a stale cache ends in a Conflict, which is thrown and
 * retried with backoff. Nothing is written when nothing changed.
 *
 * The overlay (api/v1alpha1/overlay.ts): a Node maps to itself, the hub, its site and the nodes whose
 * Declaration names it as a peer — not to the whole mesh — unless it is the hub; the overlay-hub Assignment
 * and the Mesh map to every node. A change that leaves its overlay part alone maps to itself only.
 */
import type { Client } from '../api/client/types.ts';
import type { Assignment, Declaration, Node, Route } from '../api/v1alpha1/generated/index.ts';
import { routeOwner } from '../api/v1alpha1/render-routes.ts';
import { declarationToWrite, type Rendering } from '../api/v1alpha1/render-declaration.ts';
import { onOverlay, overlayChanged, overlayNodesAffected } from '../api/v1alpha1/overlay.ts';
import { OVERLAY_HUB_MODULE } from '../api/v1alpha1/builtin-modules.ts';
import { realClock } from '../api/meta/clock.ts';
import { createController, type Controller, type Reconciler, type Source } from './runtime/controller.ts';
import type { Informer } from '../api/client/informer.ts';
import type { Logger } from '../api/meta/logger.ts';
import { informersFor, type ControllerOptions, type Informers } from './runtime/manager.ts';
import {
  addCacheIndexes,
  BY_MODULE,
  BY_OVERLAY_PEER,
  BY_OWNER_RECORD,
  BY_RESOURCE_OWNER,
  BY_SITE,
  namesOf,
} from './cache-indexes.ts';
import { overlayHub, renderNode } from './node-rendering.ts';
import {
  assignmentRenderInputsChanged,
  declarationRenderInputsChanged,
  onMeshSpecChange,
  nodeRenderInputsChanged,
} from './render-inputs.ts';

/** Options of createDeclarationController. */
export type DeclarationControllerOptions = ControllerOptions;

/** The informers the controller reads from. */
type Caches = Informers<'nodes' | 'assignments' | 'modules' | 'declarations' | 'meshes' | 'routes'>;

/** Creates the Declaration controller; add it to the manager, which starts it once the caches are synced. */
export function createDeclarationController(opts: DeclarationControllerOptions): Controller {
  const { manager } = opts;
  const caches: Caches = informersFor(manager, ['nodes', 'assignments', 'modules', 'declarations', 'meshes', 'routes']);
  addCacheIndexes(caches);
  const reconciler = new DeclarationReconciler({ client: manager.client, caches, logger: manager.logger });
  return createController({
    name: 'declaration',
    reconciler,
    workers: opts.workers ?? DECLARATION_WORKERS,
    clock: opts.clock ?? realClock,
    logger: manager.logger,
    sources: sourcesOf(caches),
  });
}

/** Where the controller's keys come from: each kind's changes mapped to the nodes to re-render. */
function sourcesOf(caches: Caches): Source[] {
  const allNodes = (): string[] => namesOf(caches.nodes.list());
  return [
    {
      informer: caches.nodes,
      keys: (obj, type, old) =>
        nodeRenderInputsChanged(type, obj as Node, old as Node | undefined)
          ? nodesOfNode(obj as Node, caches, old as Node | undefined)
          : [],
    },
    {
      informer: caches.assignments,
      keys: (obj, type, old) => {
        const a = obj as Assignment;
        if (!assignmentRenderInputsChanged(type, a, old as Assignment | undefined)) return [];
        return a.spec.module === OVERLAY_HUB_MODULE ? allNodes() : nodesOfAssignment(a, caches.declarations);
      },
    },
    { informer: caches.modules, keys: (obj) => nodesOfModule(obj.metadata.name ?? '', caches.assignments) },
    // The agent's status reports change nothing this controller renders or writes.
    {
      informer: caches.declarations,
      keys: (obj, type, old) =>
        declarationRenderInputsChanged(type, obj as Declaration, old as Declaration | undefined)
          ? [obj.metadata.name ?? '']
          : [],
    },
    // The overlay's CIDR and port are the Mesh's: a change of its spec re-renders every node (its status, e.g. the
    // recovery clock, none).
    {
      informer: caches.meshes,
      keys: onMeshSpecChange(allNodes),
    },
    { informer: caches.routes, keys: (obj) => nodesOfRoute(obj as Route, caches.declarations) },
  ];
}

/**
 * Keys reconciled at once. A change to a module used by every node queues every node: with this many
 * Declaration writes in flight, the store's group commit makes one fdatasync for many of them. 128 rather than 32:
 * at N = 5,000 an all-nodes change's per-node applied p99 was 6.0 s (4.7–7.1, nine changes) against 6.6 s (5.5–8.2)
 * with 32, lower in seven of nine pairs; at N = 1,000 about the same, 1.1–2.1 s against 1.0–2.3 s (ten changes each;
 * bench/fan-probe.ts, runs interleaved, 2026-12-03). 256 made an all-nodes change at N = 1,000 slower (p99 2.1–3.2 s against 1.2–2.3 s with 32, back to
 * back; not analysed further).
 */
export const DECLARATION_WORKERS = 128;

/** The nodes to reconcile when an assignment changed: its node, and every node whose Declaration records it. */
export function nodesOfAssignment(a: Assignment, declarations: Pick<Informer<Declaration>, 'byIndex'>): string[] {
  const holding = namesOf(declarations.byIndex(BY_OWNER_RECORD, a.metadata.name ?? ''));
  return [...new Set([a.spec.node, ...holding])];
}

/**
 * The nodes to reconcile when a Node changed: itself, and those whose overlay peers it may be (O(site),
 * overlay.ts) — only itself when the change (`old` → `node`, e.g. a heartbeat) left its overlay part alone,
 * or when it is off the overlay before and after (e.g. given its address before its agent sent a key).
 */
export function nodesOfNode(
  node: Node,
  caches: {
    nodes: Pick<Informer<Node>, 'list' | 'byIndex'>;
    assignments: Pick<Informer<Assignment>, 'byIndex'>;
    declarations: Pick<Informer<Declaration>, 'byIndex'>;
  },
  old?: Node,
): string[] {
  const name = node.metadata.name ?? '';
  if (old && old !== node && !overlayChanged(old, node)) return [name];
  const naming = (n: string): string[] => namesOf(caches.declarations.byIndex(BY_OVERLAY_PEER, n));
  // Off the overlay before and after, it is nobody's peer (overlay.ts): only Declarations still naming it change.
  if (!onOverlay(node) && !(old && onOverlay(old))) return [...new Set([name, ...naming(name)])];
  return overlayNodesAffected({
    changed: node,
    hub: overlayHub(caches.assignments),
    all: () => namesOf(caches.nodes.list()),
    atSite: (site) => caches.nodes.byIndex(BY_SITE, site),
    naming,
  });
}

/** The nodes to reconcile when a route changed: its node, and every node whose Declaration holds its resources. */
export function nodesOfRoute(r: Route, declarations: Pick<Informer<Declaration>, 'byIndex'>): string[] {
  const holding = namesOf(declarations.byIndex(BY_RESOURCE_OWNER, routeOwner(r.metadata.name ?? '')));
  return [...new Set([r.spec.node, ...holding])];
}

/** The nodes to reconcile when a module changed: those of the assignments that use it. */
export function nodesOfModule(module: string, assignments: Pick<Informer<Assignment>, 'byIndex'>): string[] {
  return [...new Set(assignments.byIndex(BY_MODULE, module).map((a) => a.spec.node))];
}

/** Reconciles one node: renders its Declaration and writes it when it changed. */
class DeclarationReconciler implements Reconciler {
  private readonly client: Client;
  private readonly caches: Caches;
  private readonly logger: Logger;

  constructor(opts: { client: Client; caches: Caches; logger: Logger }) {
    this.client = opts.client;
    this.caches = opts.caches;
    this.logger = opts.logger;
  }

  async reconcile(nodeName: string): Promise<void> {
    const rendered = renderNode(nodeName, this.caches);
    if (!rendered) return;
    await this.writeDeclaration(rendered.node, rendered.rendering, rendered.declaration);
  }

  /** Creates or updates the Declaration when the rendering changed it; returns the Declaration as stored. */
  private async writeDeclaration(
    node: Node,
    rendering: Rendering,
    current: Declaration | undefined,
  ): Promise<Declaration | undefined> {
    if (current?.metadata.deletionTimestamp) return current;
    const next = declarationToWrite({ node, rendering, current });
    if (!next) return current;
    const stored = current
      ? await this.client.update('declarations', next)
      : await this.client.create('declarations', next);
    this.logger.info(current ? 'Updated Declaration' : 'Created Declaration', {
      node: node.metadata.name,
      generation: rendering.spec.generation,
      resources: rendering.spec.resources.length,
      changed: rendering.changed,
    });
    return stored;
  }
}
