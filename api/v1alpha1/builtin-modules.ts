/**
 * The built-in modules and the two roles no node may hold twice (ADR 0053). The control plane and the
 * overlay hub are modules like any other (ADR 0002): `meshctl init` creates them and assigns each to the
 * node it runs on; admission refuses a second assignment of either (api/server/resources/admission-roles.ts).
 *
 * manifests/builtin/ holds what these functions give for the defaults (checked by a test).
 */
import { API_VERSION } from '../meta/types.ts';
import type { Assignment, Module } from './generated/index.ts';

/** The module names of the declared, never elected roles, and what each role is called in messages. */
export const ROLE_MODULES: Readonly<Record<string, string>> = {
  'control-plane': 'control plane',
  'overlay-hub': 'overlay hub',
};

/** The built-in module that runs the control plane. */
export const CONTROL_PLANE_MODULE = 'control-plane';
/** The built-in module that makes a node the overlay hub. */
export const OVERLAY_HUB_MODULE = 'overlay-hub';

/** Where the overlay hub's declared place is on its node (a declared path: it resolves under the agent's --root). */
export const OVERLAY_HUB_DIR = '/var/lib/meshctl/overlay-hub';

/** Options of `controlPlaneModule`. */
export interface ControlPlaneModuleOptions {
  /** meshctl's version (the module's version). */
  version: string;
  /** The program that runs `mesh-control-plane` (e.g. `['/usr/bin/mesh-control-plane']`). */
  command: string[];
  /** Its data directory (absolute): store, PKI, admin.meshconfig. */
  dataDir: string;
  /** `HOST:PORT` it serves on. */
  listen: string;
  /** The node it runs on (`--node`: it refuses a store that declares another). */
  node: string;
  /** Extra names for its serving certificate (`--san`). */
  sans?: string[];
}

/** The `control-plane` module: one Service the node's agent supervises (driver `process`). */
export function controlPlaneModule(o: ControlPlaneModuleOptions): Module {
  const port = Number(/:(\d+)$/.exec(o.listen)?.[1]);
  const args = [
    '--data-dir',
    o.dataDir,
    '--listen',
    o.listen,
    '--node',
    o.node,
    ...(o.sans ?? []).flatMap((s) => ['--san', s]),
  ];
  return {
    apiVersion: API_VERSION,
    kind: 'Module',
    metadata: { name: CONTROL_PLANE_MODULE },
    spec: {
      version: o.version,
      description:
        'The control plane: the API, its store and the controllers. Declared on one node, never elected; nothing takes over when it is down (ADR 0053).',
      ...(port > 0 ? { port } : {}),
      resources: [
        {
          id: 'server',
          kind: 'Service',
          spec: { driver: 'process', command: [...o.command, ...args], restart: 'always' },
        },
      ],
    },
  };
}

/**
 * The `overlay-hub` module: the hub's declared place on its node. What makes the node the hub is the
 * Assignment itself: the control plane renders the node's WireGuard resource as the hub's (it peers with
 * every node and forwards; api/v1alpha1/overlay.ts), so the module needs no WireGuard resource of its own.
 */
export function overlayHubModule(version: string): Module {
  return {
    apiVersion: API_VERSION,
    kind: 'Module',
    metadata: { name: OVERLAY_HUB_MODULE },
    spec: {
      version,
      description:
        'The overlay hub: routes overlay traffic between nodes that are not co-located. Declared on one node, never elected. ' +
        "Its assignment makes the node's WireGuard interface (rendered by the control plane) peer with every node and forward.",
      resources: [
        { id: 'dir', kind: 'Directory', spec: { path: OVERLAY_HUB_DIR, mode: '0755' } },
        {
          id: 'role',
          kind: 'File',
          dependsOn: ['dir'],
          spec: {
            path: `${OVERLAY_HUB_DIR}/ROLE`,
            mode: '0644',
            content:
              'This node is the mesh\'s overlay hub: declared by the Assignment of module "overlay-hub", never elected.\n' +
              'Its WireGuard interface peers with every node and forwards between them (Node.spec.endpoint puts a node on the overlay).\n',
          },
        },
      ],
    },
  };
}

/** The Assignment of a built-in module to a node, named after the module (`control-plane`, `overlay-hub`). */
export function roleAssignment(module: string, node: string): Assignment {
  return { apiVersion: API_VERSION, kind: 'Assignment', metadata: { name: module }, spec: { module, node } };
}
