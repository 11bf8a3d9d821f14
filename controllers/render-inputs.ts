/**
 * Which changes of a Node, a Declaration or an Assignment can change a node's rendering (node-rendering.ts) —
 * Kubernetes' GenerationChanged predicate, widened to the metadata and status the renderer reads. A heartbeat
 * (Node status: lastSeen, conditions), an agent's report (Declaration status) and the Assignment controller's
 * status (Pending, Applied) change none of it, so they queue no re-render: with N agents, that is N heartbeats,
 * 2N reports and about 2N Assignment statuses per change that cost no render.
 */
import type { InformerEventType } from '../api/client/informer.ts';
import type { Assignment, Declaration, Mesh, Node } from '../api/v1alpha1/generated/index.ts';
import { jsonEqual } from '../api/meta/json-equal.ts';
import type { KubeObject } from '../api/meta/types.ts';
import { overlayChanged } from '../api/v1alpha1/overlay.ts';
import { OWNERS_ANNOTATION } from '../api/v1alpha1/owner-records.ts';

/** What of an object's metadata a rendering reads: identity (owner references), deletion and spec generation. */
function metaView(o: Node | Declaration | Assignment | Mesh): unknown[] {
  const m = o.metadata;
  return [m.uid, m.generation, m.deletionTimestamp, m.ownerReferences];
}

/** Whether a change may change the node's rendering: true unless it is a MODIFIED whose `old` differs only elsewhere. */
export function nodeRenderInputsChanged(type: InformerEventType, obj: Node, old: Node | undefined): boolean {
  if (type !== 'MODIFIED' || !old || old === obj) return true;
  return overlayChanged(old, obj) || !jsonEqual(metaView(old), metaView(obj));
}

/** Whether a change may change what the Declaration controller renders or writes (not the agent's status). */
export function declarationRenderInputsChanged(
  type: InformerEventType,
  obj: Declaration,
  old: Declaration | undefined,
): boolean {
  if (type !== 'MODIFIED' || !old || old === obj) return true;
  const owners = (d: Declaration) => d.metadata.annotations?.[OWNERS_ANNOTATION];
  return owners(old) !== owners(obj) || !jsonEqual(metaView(old), metaView(obj));
}

/** Whether an Assignment's change may change its nodes' renderings: not when only its status changed. */
export function assignmentRenderInputsChanged(
  type: InformerEventType,
  obj: Assignment,
  old: Assignment | undefined,
): boolean {
  if (type !== 'MODIFIED' || !old || old === obj) return true;
  return !jsonEqual(old.spec, obj.spec) || !jsonEqual(metaView(old), metaView(obj));
}

/**
 * Whether a Mesh change may change what a controller decides from it: its spec (the overlay's CIDR and port, the
 * reachability grace period, the certificates' issuer and renewal) or its identity and deletion. Not a status-only
 * write: the recovery clock rewrites outageBudgetSeconds once a minute, and each rewrite queued every node in the
 * Declaration, Node and overlay controllers (15,000 reconciles a minute at N = 5,000, none of them writing).
 */
export function meshSpecChanged(type: InformerEventType, obj: Mesh, old: Mesh | undefined): boolean {
  if (type !== 'MODIFIED' || !old || old === obj) return true;
  return !jsonEqual(old.spec, obj.spec) || !jsonEqual(metaView(old), metaView(obj));
}

/** A controller's Mesh source keys (runtime/controller.ts Source.keys): `all()` when meshSpecChanged, else none. */
export function onMeshSpecChange(all: () => string[]) {
  return (obj: KubeObject, type: InformerEventType, old?: KubeObject): string[] =>
    meshSpecChanged(type, obj as Mesh, old as Mesh | undefined) ? all() : [];
}
