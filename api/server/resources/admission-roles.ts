/**
 * No node holds a contended role (ADR 0053): the control plane and the overlay hub are each assigned to
 * exactly one node, by an Assignment — declared, never elected. Admission refuses to create a second
 * assignment of either module, or to turn another assignment into one, with a 422 that names the node
 * holding the role and how to move it. There is no election, promotion or failover to fall back on.
 *
 * The check reads the store's in-memory state and the write follows it without yielding, so two
 * concurrent requests cannot both pass it.
 */
import { ApiError } from '../../meta/api-error.ts';
import type { KubeObject } from '../../meta/types.ts';
import type { Store } from '../../store/types.ts';
import { ROLE_MODULES } from '../../v1alpha1/builtin-modules.ts';

interface AssignmentLike {
  metadata: { name?: string; deletionTimestamp?: string };
  spec?: { module?: unknown; node?: unknown };
}

/** Throws 422 Invalid when `obj` would be a second assignment of a role module; other objects pass. */
export function checkRoleAssignment(obj: KubeObject, store: Pick<Store, 'list'>): void {
  if (obj.kind !== 'Assignment') return;
  const a = obj as AssignmentLike;
  const module = a.spec?.module;
  if (typeof module !== 'string' || !(module in ROLE_MODULES)) return;
  const holder = (store.list('assignments').items as AssignmentLike[]).find(
    (o) => o.metadata.name !== a.metadata.name && o.spec?.module === module,
  );
  if (!holder) return;
  throw ApiError.invalid('Assignment', a.metadata.name ?? '', [
    {
      field: 'spec.module',
      reason: 'FieldValueDuplicate',
      message: roleMessage(module, holder),
    },
  ]);
}

/** The refusal: the role is declared, not elected; who holds it; how to move it. */
function roleMessage(module: string, holder: AssignmentLike): string {
  const role = ROLE_MODULES[module];
  const name = holder.metadata.name ?? '';
  const node = String(holder.spec?.node ?? '');
  const deleting = holder.metadata.deletionTimestamp ? ` (it is being deleted; wait until it is gone)` : '';
  const move =
    module === 'control-plane'
      ? ' Moving the control plane moves its store: restore a backup on the new node and start it there with `mesh-control-plane --restore`.'
      : '';
  const how =
    module === 'control-plane'
      ? ''
      : ` To move it, delete assignment "${name}" first, then assign module "${module}" to the new node.`;
  return (
    `Duplicate value: "${module}": the ${role} role is declared, not elected, and exactly one node holds it: ` +
    `node "${node}" holds it by assignment "${name}"${deleting}.${how}${move}`
  );
}

/**
 * Refuses, with 403, deleting what the mesh cannot do without, through its own API:
 *
 * - what runs the control plane, its assignment or its module. The control-plane node's agent would stop the
 *   very process serving the mesh, with nothing to take over and no API left to assign it anew. Moving it is
 *   a restore onto the new node, never a delete.
 * - the `Mesh` singleton. Every mesh has it (`meshctl init` creates it, and the control plane creates it with
 *   the defaults when it starts without one); it holds the mesh-wide settings and names the control-plane
 *   node, which the control plane checks when it starts. Its settings are changed, never deleted.
 */
export function checkRoleDelete(plural: string, name: string, store: Pick<Store, 'get'>): void {
  if (plural === MESH_PLURAL && name === MESH_NAME) throw forbidden(plural, name, MESH_REASON);
  const obj = store.get(plural, name) as AssignmentLike | undefined;
  const isControlPlane =
    (plural === 'assignments' && obj?.spec?.module === 'control-plane') ||
    (plural === 'modules' && name === 'control-plane');
  if (!isControlPlane) return;
  throw forbidden(
    plural,
    name,
    'it runs this control plane, and deleting it would stop the API that is answering; there is no failover to take over. ' +
      'To move the control plane, restore its data directory on the new node and start it there once with ' +
      '`mesh-control-plane --restore` (see README: Running it on real machines).',
  );
}

const MESH_PLURAL = 'meshes';
const MESH_NAME = 'mesh';
const MESH_REASON =
  'the Mesh is the singleton every mesh has: it holds the mesh-wide settings and names the control-plane node, ' +
  'which the control plane checks when it starts. Change its settings instead (`meshctl apply -f` a Mesh named "mesh", ' +
  'or `kubectl patch mesh mesh --type=merge`); a field left out takes its default.';

function forbidden(plural: string, name: string, why: string): ApiError {
  return new ApiError({
    reason: 'Forbidden',
    message: `${plural}.meshctl.dev "${name}" is forbidden: ${why}`,
    details: { name, group: 'meshctl.dev', kind: plural },
  });
}
