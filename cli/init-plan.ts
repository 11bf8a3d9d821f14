/**
 * What `meshctl init` will do, decided from its flags before anything is written: the paths, the node, the
 * listen address, the command that runs the control plane, and the objects the control plane's store gets.
 * Pure except for reading the host name, the user id and whether `mesh-control-plane` sits beside this meshctl.
 *
 * Defaults: as root (a real machine) the data lives under /var/lib/meshctl/, where the systemd unit in
 * manifests/systemd/ expects it, and the agent's root is `/`; as any other user everything lives under
 * ./.meshctl/ (where the local mesh and meshctl's config lookup look too), the agent's root included
 * (./.meshctl/root stands in for `/`, as in the local mesh): the built-in modules declare machine paths such
 * as /var/lib/meshctl/overlay-hub, which resolve under the agent's root, so trying it needs no root.
 */
import { existsSync, realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { KubeObject } from '../api/meta/types.ts';
import { API_VERSION } from '../api/meta/types.ts';
import { parseHostPort, type HostPort } from '../api/meta/host-port.ts';
import { MESHCTL_VERSION } from '../api/server/http/version.ts';
import {
  CONTROL_PLANE_MODULE,
  OVERLAY_HUB_MODULE,
  controlPlaneModule,
  overlayHubModule,
  roleAssignment,
} from '../api/v1alpha1/builtin-modules.ts';
import { validateObject } from '../api/v1alpha1/validate.ts';
import { UsageError } from './errors.ts';

/** The flags of `meshctl init`, as given. */
export interface InitFlags {
  dataDir?: string;
  agentStateDir?: string;
  agentRoot?: string;
  listen?: string;
  name?: string;
  site?: string;
  sans: string[];
  controlPlaneCommand?: string;
}

/** Everything init needs, resolved. */
export interface InitPlan {
  dataDir: string;
  agentStateDir: string;
  /** The agent's `--root`: every declared path (the built-in modules' too) resolves under it. */
  agentRoot: string;
  /** As given (`HOST:PORT`), for the control plane's `--listen`. */
  listen: string;
  host: string;
  port: number;
  node: string;
  site?: string;
  sans: string[];
  command: string[];
  /** In creation order; the Mesh comes last (its presence means init finished). */
  objects: { plural: string; obj: KubeObject }[];
}

/** Where the data lives by default: /var/lib/meshctl as root, ./.meshctl otherwise. */
export function defaultBase(uid: number | undefined = process.getuid?.()): string {
  return uid === 0 ? '/var/lib/meshctl' : resolve('.meshctl');
}

/** The agent's root by default: `/` as root, else ./.meshctl/root (a folder standing in for `/`). */
export function defaultAgentRoot(uid: number | undefined = process.getuid?.()): string {
  return uid === 0 ? '/' : join(defaultBase(uid), 'root');
}

/**
 * How to run one of meshctl's programs (`mesh-control-plane`, `mesh-agent`), resolved now so that it works
 * as printed and the agent (whose PATH may differ) runs exactly it: the command of that name beside the
 * meshctl command that was run (`/usr/bin/meshctl` after `npm install -g .`, or a checkout's
 * `dist/bin/meshctl`); else, for `node dist/meshctl.js`, node with the built `<name>.js` beside it; else
 * `<name>` from PATH.
 */
export function programCommand(name: string, script: string | undefined = process.argv[1]): string[] {
  if (!script) return [name];
  const command = join(dirname(resolve(script)), name);
  if (existsSync(command)) return [command];
  try {
    const bundle = join(dirname(realpathSync(script)), `${name}.js`);
    if (existsSync(bundle)) return [process.execPath, bundle];
  } catch {
    /* not a file: fall through */
  }
  return [name];
}

/** Splits `HOST:PORT` (`[::1]:6443` too); the port must be fixed (1–65535): agents are told it. */
export function parseListen(listen: string): HostPort {
  let parsed: HostPort | undefined;
  try {
    parsed = parseHostPort(listen, { defaultHost: '0.0.0.0' });
  } catch {
    /* reported below */
  }
  if (!parsed || parsed.port < 1)
    throw new UsageError(`--listen must be HOST:PORT with a port from 1 to 65535 (e.g. 0.0.0.0:6443), not "${listen}"`);
  return parsed;
}

/** Resolves the flags into a plan; a bad flag is a UsageError. */
export function planInit(f: InitFlags): InitPlan {
  const base = defaultBase();
  const dataDir = resolve(f.dataDir ?? join(base, 'control-plane'));
  const agentStateDir = resolve(f.agentStateDir ?? join(base, 'agent'));
  const agentRoot = resolve(f.agentRoot ?? defaultAgentRoot());
  const listen = f.listen ?? '0.0.0.0:6443';
  const { host, port } = parseListen(listen);
  const node = f.name ?? hostname().toLowerCase();
  const command =
    f.controlPlaneCommand !== undefined
      ? f.controlPlaneCommand.trim().split(/\s+/).filter(Boolean)
      : programCommand('mesh-control-plane');
  if (command.length === 0) throw new UsageError('--control-plane-command must not be empty');
  const plan: InitPlan = {
    dataDir,
    agentStateDir,
    agentRoot,
    listen,
    host,
    port,
    node,
    sans: f.sans,
    command,
    objects: [],
    ...(f.site ? { site: f.site } : {}),
  };
  plan.objects = initObjects(plan);
  for (const { obj } of plan.objects) {
    const causes = validateObject(obj);
    if (causes.length) {
      const flag =
        obj.kind === 'Node' ? (f.name === undefined ? ' (the host name; pass --name)' : ' (--name / --site)') : '';
      throw new UsageError(
        `${obj.kind} "${obj.metadata.name}" would be invalid${flag}: ${causes.map((c) => `${c.field}: ${c.message}`).join('; ')}`,
      );
    }
  }
  return plan;
}

/** The objects init creates, in order: Node, the two built-in Modules, their Assignments, then the Mesh. */
function initObjects(p: InitPlan): { plural: string; obj: KubeObject }[] {
  const node: KubeObject = {
    apiVersion: API_VERSION,
    kind: 'Node',
    metadata: { name: p.node },
    spec: p.site ? { site: p.site } : {},
  };
  const cp = controlPlaneModule({
    version: MESHCTL_VERSION,
    command: p.command,
    dataDir: p.dataDir,
    listen: p.listen,
    node: p.node,
    sans: p.sans,
  });
  const mesh: KubeObject = {
    apiVersion: API_VERSION,
    kind: 'Mesh',
    metadata: { name: 'mesh' },
    spec: {},
    status: { controlPlaneNode: p.node, hubNode: p.node },
  };
  const k = (o: unknown): KubeObject => o as KubeObject;
  return [
    { plural: 'nodes', obj: node },
    { plural: 'modules', obj: k(cp) },
    { plural: 'modules', obj: k(overlayHubModule(MESHCTL_VERSION)) },
    { plural: 'assignments', obj: k(roleAssignment(CONTROL_PLANE_MODULE, p.node)) },
    { plural: 'assignments', obj: k(roleAssignment(OVERLAY_HUB_MODULE, p.node)) },
    { plural: 'meshes', obj: mesh },
  ];
}
