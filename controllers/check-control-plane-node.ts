/**
 * The control-plane process and the node it runs on (ADR 0053: declared, never elected). Before serving,
 * the process compares its own node (`--node`, default the host name) with the node its store declares
 * (Mesh `mesh` status.controlPlaneNode, else the node of the `control-plane` Assignment):
 *
 * - nothing declared (a store not made by `meshctl init`, e.g. the local mesh): it serves;
 * - the same node: it serves;
 * - another node: it refuses to start — a copy of the store on another machine must not become a second
 *   control plane — unless started with `--restore`, the explicit restore onto a new node. A restore
 *   rewrites the declaration to name this node (the Mesh status, the `control-plane` Assignment, the
 *   `--node` argument of the `control-plane` module, a Node object when missing) and logs it.
 *
 * Nothing here elects, promotes or fails over: a person decides, by starting the process.
 */
import type { Logger } from '../api/meta/logger.ts';
import { API_VERSION } from '../api/meta/types.ts';
import type { Store } from '../api/store/types.ts';
import { CONTROL_PLANE_MODULE } from '../api/v1alpha1/builtin-modules.ts';
import type { Assignment } from '../api/v1alpha1/generated/index.ts';

/** Options of `checkControlPlaneNode`. */
export interface ControlPlaneNodeOptions {
  store: Store;
  /** The node this process runs on. */
  node: string;
  /** Started with `--restore`. */
  restore: boolean;
  logger: Logger;
}

/** A refusal to serve: printed as it is, exit code 1. */
export class WrongNodeError extends Error {}

/** The node the store declares as the control-plane node, and where that is written; undefined when none. */
export function declaredControlPlaneNode(
  store: Pick<Store, 'get' | 'list'>,
): { node: string; source: string } | undefined {
  const mesh = store.get('meshes', 'mesh');
  if (mesh?.status?.controlPlaneNode)
    return { node: mesh.status.controlPlaneNode, source: 'Mesh "mesh" status.controlPlaneNode' };
  const a = controlPlaneAssignment(store);
  return a ? { node: a.spec.node, source: `Assignment "${a.metadata.name}"` } : undefined;
}

/** Serves on, refuses (WrongNodeError) or restores: see the module comment. */
export async function checkControlPlaneNode(o: ControlPlaneNodeOptions): Promise<void> {
  const declared = declaredControlPlaneNode(o.store);
  if (!declared || declared.node === o.node) {
    if (o.restore)
      o.logger.info('Nothing to restore: the store already names this node, or none', {
        node: o.node,
        declared: declared?.node,
      });
    return;
  }
  if (!o.restore) {
    throw new WrongNodeError(
      `this store declares node "${declared.node}" as the control-plane node (${declared.source}), but this process runs on node "${o.node}" ` +
        '(--node, default: the host name). The control plane is declared, not elected: refusing to serve a second copy of the mesh. ' +
        `If node "${declared.node}" is gone for good and this is a restore of its store onto this node, start once with --restore; ` +
        "if this is another node's data directory, use this node's own (--data-dir).",
    );
  }
  await restoreOnto(o, declared.node);
}

async function restoreOnto(o: ControlPlaneNodeOptions, previous: string): Promise<void> {
  const { store, node } = o;
  if (!store.get('nodes', node))
    await store.create('nodes', { apiVersion: API_VERSION, kind: 'Node', metadata: { name: node }, spec: {} });
  const a = controlPlaneAssignment(store);
  if (a && a.spec.node !== node) await store.update('assignments', { ...a, spec: { ...a.spec, node } });
  const mod = store.get('modules', CONTROL_PLANE_MODULE);
  if (mod) {
    const resources = mod.spec.resources.map((r) =>
      r.kind === 'Service' ? { ...r, spec: { ...r.spec, command: withNodeArg(r.spec.command, node) } } : r,
    );
    await store.update('modules', { ...mod, spec: { ...mod.spec, resources } });
  }
  const mesh = store.get('meshes', 'mesh');
  if (mesh)
    await store.update(
      'meshes',
      { ...mesh, status: { ...mesh.status, controlPlaneNode: node } },
      { subresource: 'status' },
    );
  o.logger.info('Restored the control plane onto this node', {
    node,
    previous,
    assignment: a?.metadata.name,
    note: `the store named node "${previous}"; it now names "${node}"`,
  });
}

/** The `control-plane` Assignment (there is at most one: admission-roles.ts). */
function controlPlaneAssignment(store: Pick<Store, 'list'>): Assignment | undefined {
  return store.list('assignments').items.find((a) => a.spec?.module === CONTROL_PLANE_MODULE);
}

/** `command` with the value after `--node` replaced by `node` (unchanged when it has no `--node`). */
function withNodeArg(command: string[], node: string): string[] {
  const i = command.indexOf('--node');
  return i < 0 || i + 1 >= command.length ? command : [...command.slice(0, i + 1), node, ...command.slice(i + 2)];
}
