/**
 * Renders one node's Declaration from the informers' caches: what the Declaration controller writes and what
 * the Assignment controller compares with the stored Declaration (the same rendering, so both agree on
 * "written yet"). Reads only the node's own objects through the cache indexes (cache-indexes.ts): its
 * assignments, their modules, its routes, and for the overlay itself, the hub and its site — every node only
 * when it is the hub.
 */
import type { Informer } from '../api/client/informer.ts';
import type { Assignment, Declaration, Mesh, Module, Node, Route } from '../api/v1alpha1/generated/index.ts';
import { OVERLAY_HUB_MODULE } from '../api/v1alpha1/builtin-modules.ts';
import { hubOf, onOverlay, renderOverlay } from '../api/v1alpha1/overlay.ts';
import { renderDeclaration, type Rendering } from '../api/v1alpha1/render-declaration.ts';
import { renderRoutes } from '../api/v1alpha1/render-routes.ts';
import { BY_MODULE, BY_NODE, BY_SITE } from './cache-indexes.ts';

/** The caches a node's rendering reads (indexed by addCacheIndexes). */
export interface RenderCaches {
  nodes: Pick<Informer<Node>, 'get' | 'list' | 'byIndex'>;
  assignments: Pick<Informer<Assignment>, 'byIndex'>;
  modules: Pick<Informer<Module>, 'get'>;
  declarations: Pick<Informer<Declaration>, 'get'>;
  meshes: Pick<Informer<Mesh>, 'list'>;
  routes: Pick<Informer<Route>, 'byIndex'>;
}

/** One node's rendering, with the Node and the Declaration as cached. */
export interface NodeRendering {
  node: Node;
  declaration: Declaration | undefined;
  rendering: Rendering;
}

/** The overlay hub's name (the node the overlay-hub module is assigned to), from the module index. */
export function overlayHub(assignments: Pick<Informer<Assignment>, 'byIndex'>): string | undefined {
  return hubOf(assignments.byIndex(BY_MODULE, OVERLAY_HUB_MODULE));
}

/** Renders `nodeName`'s Declaration; undefined when its Node is not cached or is being deleted. */
export function renderNode(nodeName: string, caches: RenderCaches): NodeRendering | undefined {
  const node = caches.nodes.get(nodeName);
  if (!node || node.metadata.deletionTimestamp) return undefined;
  const assignments = caches.assignments.byIndex(BY_NODE, nodeName);
  const declaration = caches.declarations.get(nodeName);
  const modules = new Map<string, Module>();
  for (const a of assignments) {
    const m = caches.modules.get(a.spec.module);
    if (m) modules.set(a.spec.module, m);
  }
  const hub = overlayHub(caches.assignments);
  // A node off the overlay renders none (overlay.ts): its site need not be read.
  const overlay = onOverlay(node)
    ? renderOverlay({
        node: nodeName,
        nodes: overlayCandidates(node, hub, caches.nodes),
        hub,
        mesh: caches.meshes.list()[0],
      })
    : undefined;
  const rendering = renderDeclaration({
    node: nodeName,
    assignments,
    modules,
    current: declaration,
    routeResources: renderRoutes(caches.routes.byIndex(BY_NODE, nodeName), node),
    overlay,
  });
  return { node, declaration, rendering };
}

/** The Nodes that can be `node`'s overlay peers (overlay.ts): every node for the hub, else the hub and its site. */
function overlayCandidates(node: Node, hub: string | undefined, nodes: RenderCaches['nodes']): Node[] {
  if (hub === node.metadata.name) return nodes.list();
  const out = new Map<string, Node>([[node.metadata.name ?? '', node]]);
  const hubNode = hub !== undefined ? nodes.get(hub) : undefined;
  if (hubNode) out.set(hubNode.metadata.name ?? '', hubNode);
  const site = node.spec?.site;
  if (site !== undefined) for (const n of nodes.byIndex(BY_SITE, site)) out.set(n.metadata.name ?? '', n);
  return [...out.values()];
}
