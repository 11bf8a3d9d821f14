/**
 * `meshctl init`: makes this machine the mesh's control-plane node (ADR 0053: declared, never elected).
 * Run once, before any control plane runs here. It creates the CA, the serving certificate and the admin
 * credential (api/server/pki/first-start.ts), seeds the control plane's store (init-store.ts) and hands this
 * node's agent its first Declaration (api/wire/agent-bootstrap.ts): the agent then runs the control plane
 * as a supervised service, like any module (ADR 0002).
 *
 * A second init on an initialised data directory changes nothing and fails: there is no `--force`, since
 * a new CA would cut off every node that pinned the old one. To start over, remove the directories.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { agentBootstrapPath, renderAgentBootstrap } from '../api/wire/agent-bootstrap.ts';
import { writeFileAtomic } from '../api/meta/atomic-file.ts';
import { caPin } from '../api/meta/ca-pin.ts';
import { controlPlanePaths, ensureControlPlaneFiles, writeAdminMeshconfig } from '../api/server/pki/first-start.ts';
import { socketPathUsable } from '../api/server/listen-unix.ts';
import { certInfo } from '../api/server/pki/pki.ts';
import { serverUrl } from '../api/server/pki/serving-names.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { Command, CommandContext } from './command.ts';
import { CliError, EXIT_OK, UsageError } from './errors.ts';
import { planInit, type InitPlan } from './init-plan.ts';
import { finishInit, initialisedMesh, openControlPlaneStore, seedStore } from './init-store.ts';
import { nextSteps } from './init-output.ts';

/** The `init` command. */
export const command: Command = {
  usage:
    'init [--data-dir DIR] [--agent-state-dir DIR] [--agent-root DIR] [--listen HOST:PORT] [--name NODE] [--site SITE] [--san NAME]...',
  description:
    'Make this machine the control-plane node of a new mesh: CA, serving certificate, admin credential, ' +
    'the Mesh, this Node, and the built-in modules control-plane and overlay-hub assigned to it. ' +
    "Seeds this node's agent, which then runs the control plane. Run it once, before any control plane runs here.",
  examples: [
    'sudo meshctl init --san cp.example.org --san 203.0.113.10 --site fra1',
    'meshctl init --data-dir ./.meshctl/control-plane --listen 127.0.0.1:6443   # as a normal user, to try it',
  ],
  flags: [
    {
      name: 'data-dir',
      type: 'string',
      arg: 'DIR',
      help: "the control plane's data directory (default /var/lib/meshctl/control-plane as root, else ./.meshctl/control-plane)",
    },
    {
      name: 'agent-state-dir',
      type: 'string',
      arg: 'DIR',
      help: "this node's agent state directory, seeded here (default /var/lib/meshctl/agent as root, else ./.meshctl/agent)",
    },
    {
      name: 'agent-root',
      type: 'string',
      arg: 'DIR',
      help: "this node's agent --root, under which every declared path resolves (default / as root, else ./.meshctl/root)",
    },
    { name: 'listen', type: 'string', arg: 'HOST:PORT', help: 'where the control plane serves (default 0.0.0.0:6443)' },
    { name: 'name', type: 'string', arg: 'NODE', help: "this node's name (default: the host name)" },
    { name: 'site', type: 'string', arg: 'SITE', help: "this node's site (co-location group)" },
    {
      name: 'san',
      type: 'strings',
      arg: 'NAME',
      help: 'a DNS name or IP address agents reach the control plane at (repeatable)',
    },
    {
      name: 'control-plane-command',
      type: 'string',
      arg: 'CMD',
      help: 'the program that runs mesh-control-plane, split on spaces (default: the mesh-control-plane beside this meshctl, else mesh-control-plane on PATH)',
    },
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const a = ctx.args;
  if (a.positionals.length) throw new UsageError(`init takes no arguments, got "${a.positionals.join(' ')}"`);
  const plan = planInit({
    dataDir: a.str('data-dir'),
    agentStateDir: a.str('agent-state-dir'),
    agentRoot: a.str('agent-root'),
    listen: a.str('listen'),
    name: a.str('name'),
    site: a.str('site'),
    sans: a.list('san'),
    controlPlaneCommand: a.str('control-plane-command'),
  });
  if (!existsSync(controlPlanePaths(plan.dataDir).store)) refuseUsedAgentStateDir(plan.agentStateDir);
  mkdirSync(plan.dataDir, { recursive: true, mode: 0o700 });
  const store = await openControlPlaneStore(controlPlanePaths(plan.dataDir).store);
  try {
    const mesh = initialisedMesh(store);
    if (mesh) throw new CliError(alreadyInitialised(plan, mesh));
    refuseUsedAgentStateDir(plan.agentStateDir);
    const files = await ensureControlPlaneFiles({ dataDir: plan.dataDir, listenHost: plan.host, extraSans: plan.sans });
    const url = serverUrl(plan.host, plan.port, false);
    // The local socket the control plane will serve (api/server/listen-unix.ts), for meshctl on this machine.
    const socket = controlPlanePaths(plan.dataDir).socket;
    writeAdminMeshconfig(files, url, undefined, socketPathUsable(socket) ? socket : undefined);
    const seeded = await seedStore(store, plan);
    const bootstrap = agentBootstrapPath(plan.agentStateDir);
    mkdirSync(plan.agentStateDir, { recursive: true, mode: 0o700 });
    mkdirSync(plan.agentRoot, { recursive: true, mode: 0o755 });
    await writeFileAtomic(
      bootstrap,
      renderAgentBootstrap({
        nodeName: plan.node,
        ...(plan.site ? { site: plan.site } : {}),
        connection: { server: url, caData: files.ca.certPem, token: seeded.credential },
        declaration: seeded.declaration,
      }),
      { mode: 0o600 },
    );
    await finishInit(store, plan);
    const names = certInfo(files.serving.certPem);
    ctx.out(
      nextSteps({
        plan,
        url,
        meshconfig: files.meshconfigPath,
        bootstrap,
        caHash: caPin(files.ca.certPem),
        certNames: [...names.dnsNames, ...names.ipAddresses],
      }),
    );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

function alreadyInitialised(plan: InitPlan, mesh: KubeObject): string {
  const status = (mesh.status ?? {}) as { controlPlaneNode?: string };
  return (
    `${plan.dataDir} is already initialised: its store holds Mesh "mesh" (control-plane node ` +
    `"${status.controlPlaneNode ?? 'unknown'}", created ${mesh.metadata.creationTimestamp ?? 'at an unknown time'}). Nothing was changed. ` +
    "To run the control plane, start this node's agent (mesh-agent run); to start over, remove the data directory " +
    'and the agent state directory — every node that joined the old mesh must then join again.'
  );
}

/** An agent state directory whose agent already has a store belongs to a running (or joined) agent. */
function refuseUsedAgentStateDir(dir: string): void {
  const store = join(dir, 'store');
  if (existsSync(store) && readdirSync(store).length > 0) {
    throw new CliError(
      `${dir} already holds an agent's store: an agent runs (or ran) on this machine. ` +
        'meshctl init seeds a new agent only; pass another --agent-state-dir, or remove that one to start over. Nothing was changed.',
    );
  }
}
