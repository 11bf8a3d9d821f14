/**
 * The informer indexes the Declaration and Assignment controllers share (api/client/object-cache.ts), so that
 * mapping an event to keys and rendering one node read only the objects concerned instead of scanning every
 * Node, Assignment and Declaration: with N nodes, a change to one Module then costs O(N) in all, not O(N²).
 */
import type { Informer } from '../api/client/informer.ts';
import type { Assignment, Declaration, Node, Route } from '../api/v1alpha1/generated/index.ts';
import { readOwnerRecords } from '../api/v1alpha1/owner-records.ts';
import { overlayPeerNames } from '../api/v1alpha1/overlay.ts';

/** Assignments and Routes by `spec.node`. */
export const BY_NODE = 'spec.node';
/** Assignments by `spec.module`. */
export const BY_MODULE = 'spec.module';
/** Declarations by the assignments their owner records name (render-declaration.ts OWNERS_ANNOTATION). */
export const BY_OWNER_RECORD = 'ownerRecords';
/** Declarations by the `owner` of their resources (e.g. `route.<name>`). */
export const BY_RESOURCE_OWNER = 'resourceOwners';
/** Declarations by the nodes their overlay resource names as peers. */
export const BY_OVERLAY_PEER = 'overlayPeers';
/** Nodes by `status.overlay.address` (the overlay controller's record of what is taken). */
export const BY_OVERLAY_ADDRESS = 'status.overlay.address';
/** Nodes by `spec.site` (nodes without a site are in no entry). */
export const BY_SITE = 'spec.site';

/** The caches the indexes are added to. */
export interface IndexedCaches {
  nodes: Pick<Informer<Node>, 'addIndex'>;
  assignments: Pick<Informer<Assignment>, 'addIndex'>;
  declarations: Pick<Informer<Declaration>, 'addIndex'>;
  routes?: Pick<Informer<Route>, 'addIndex'>;
}

/** Adds every index above to the (shared) informers; adding them twice is harmless. */
export function addCacheIndexes(caches: IndexedCaches): void {
  caches.assignments.addIndex(BY_NODE, (a) => [a.spec.node]);
  caches.assignments.addIndex(BY_MODULE, (a) => [a.spec.module]);
  caches.routes?.addIndex(BY_NODE, (r) => [r.spec.node]);
  caches.declarations.addIndex(BY_OWNER_RECORD, (d) => Object.keys(readOwnerRecords(d)));
  caches.declarations.addIndex(BY_RESOURCE_OWNER, (d) => [...new Set((d.spec?.resources ?? []).map((r) => r.owner))]);
  caches.declarations.addIndex(BY_OVERLAY_PEER, (d) => overlayPeerNames(d.spec?.resources));
  caches.nodes.addIndex(BY_SITE, (n) => (n.spec?.site !== undefined ? [n.spec.site] : []));
}

/** The names of objects. */
export function namesOf(objs: readonly { metadata: { name?: string } }[]): string[] {
  return objs.map((o) => o.metadata.name ?? '');
}
