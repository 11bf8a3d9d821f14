/**
 * The restore drill of issue 11, shared by its e2e test (backup-restore.test.ts) and its benchmark
 * (bench/restore-drill.ts): a mesh of the real `mesh-control-plane` and three real `mesh-agent` processes (each
 * joined with a join token, so it holds its own node credential, which the backup keeps as a hash) with a
 * module (a file and a service) on every node; a backup pulled off the node with `meshctl backup create -o`;
 * more changes (a module assigned to node-a after the backup); SIGKILL of the control plane and removal of its
 * data directory; `mesh-control-plane restore FILE` onto a new data directory and port; `mesh-agent set-server`
 * on each node. The drill's figure is the time from the restore command to every agent reporting the restored
 * (re-issued) declaration applied.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import { loadMeshconfig } from '../../api/client/meshconfig.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import type { Declaration } from '../../api/v1alpha1/generated/index.ts';
import { servicePid, waitFor, type AgentProcess } from '../../agent/testing.ts';
import { caPin } from '../../api/meta/ca-pin.ts';
import { createToken, spawnAgentCommand } from './join-helpers.ts';
import { captureOutput, REPO_ROOT, spawnControlPlane, type ControlPlaneProcess } from '../harness.ts';
import {
  applyObject,
  assignmentObject,
  INTERVALS,
  meshctl,
  moduleObject,
  taggedCommand,
  waitApplied,
  type CliRun,
  type Mesh,
} from './mesh-helpers.ts';

/** The drill's nodes. */
export const DRILL_NODES = ['node-a', 'node-b', 'node-c'] as const;

const app = moduleObject('app', '1.0.0', [
  { id: 'dir', kind: 'Directory', spec: { path: '/srv/app' } },
  { id: 'conf', kind: 'File', spec: { path: '/srv/app/conf', content: 'before the backup\n' } },
  { id: 'svc', kind: 'Service', spec: { driver: 'process', command: taggedCommand('drill-app') } },
]);
/** A module made after the backup: the restore loses it, and node-a goes back to the restored declaration. */
const late = moduleObject('late', '1.0.0', [
  { id: 'file', kind: 'File', spec: { path: '/srv/late.txt', content: 'after the backup\n' } },
]);

/** What the drill did and measured. */
export interface DrillResult {
  /** `meshctl backup create -o FILE` as it ran. */
  create: CliRun;
  archive: string;
  /** The restored control plane (its output holds the restore's log line). */
  cp: ControlPlaneProcess;
  admin: HttpClient;
  /** The admin meshconfig kept on the admin's machine (its token survives the restore). */
  adminConfig: string;
  /** Service pids per node before the backup and after the agents reported. */
  pids: { before: Record<string, number>; after: Record<string, number | undefined> };
  /** From the restore command to the control plane serving, and to every agent reporting, in ms. */
  servingMs: number;
  reportingMs: number;
  /** The set-server runs. */
  setServer: CliRun[];
}

/** Runs the drill on `mesh` (see the file comment); the caller asserts on the result. */
export async function runRestoreDrill(mesh: Mesh): Promise<DrillResult> {
  const cp = await mesh.controlPlane();
  const admin = mesh.admin(cp);
  const agents = await Promise.all(DRILL_NODES.map((n) => joinedAgent(mesh, cp, n)));
  await applyObject(admin, 'modules', app);
  for (const n of DRILL_NODES) await applyObject(admin, 'assignments', assignmentObject(`app-on-${n}`, 'app', n));
  for (const n of DRILL_NODES) await waitApplied(admin, `app-on-${n}`, '1.0.0', 60_000);
  const pid = (n: string): number | undefined => servicePid(mesh.node(n).stateDir, `app-on-${n}/svc`);
  const before = Object.fromEntries(DRILL_NODES.map((n) => [n, pid(n)!]));

  // The admin's machine: its meshconfig and the backup, off the control-plane node.
  const away = join(mesh.dir, 'admin-machine');
  mkdirSync(away);
  const adminConfig = join(away, 'admin.meshconfig');
  copyFileSync(cp.meshconfigPath, adminConfig);
  const archive = join(away, 'mesh.meshbackup');
  const create = await meshctl(adminConfig, ['backup', 'create', '-o', archive, '--description', 'drill'], 60_000);
  if (create.code !== 0) throw new Error(`meshctl backup create failed: ${create.stderr}`);

  await applyObject(admin, 'modules', late);
  await applyObject(admin, 'assignments', assignmentObject('late-on-node-a', 'late', 'node-a'));
  await waitApplied(admin, 'late-on-node-a', '1.0.0', 60_000);
  await cp.kill();
  rmSync(cp.dataDir, { recursive: true, force: true });

  const started = performance.now();
  const restored = await spawnControlPlane({
    dataDir: join(mesh.dir, 'cp-restored'),
    args: ['restore', archive, '--node', 'new-box', '--admin-config', adminConfig],
    timeoutMs: 60_000,
  });
  mesh.track(restored.pid);
  const servingMs = performance.now() - started;
  const newAdmin = mesh.admin(restored);
  const setServer = await Promise.all(DRILL_NODES.map((n) => setServerOf(mesh.node(n).stateDir, restored.url)));
  await waitFor(
    () => everyNodeReported(newAdmin),
    60_000,
    'every agent to report the restored declaration applied',
  ).catch(async (e: Error) => {
    const decls = await newAdmin.list('declarations').catch(() => ({ items: [] }));
    const tails = agents.map((a) => a.output().split('\n').slice(-12).join('\n'));
    throw new Error(
      `${e.message}\n${JSON.stringify(decls.items.map((x) => [x.metadata, x.status]))}\n${tails.join('\n---\n')}\n${restored.output().slice(-3000)}`,
    );
  });
  const reportingMs = performance.now() - started;
  const after = Object.fromEntries(DRILL_NODES.map((n) => [n, pid(n)]));
  return {
    create,
    archive,
    cp: restored,
    admin: newAdmin,
    adminConfig,
    pids: { before, after },
    servingMs,
    reportingMs,
    setServer,
  };
}

/** Node `name`'s agent, joined with a join token (`mesh-agent join`): it holds its own node credential. */
async function joinedAgent(mesh: Mesh, cp: ControlPlaneProcess, name: string): Promise<AgentProcess> {
  const { token } = await createToken(cp.config);
  const { stateDir, root } = mesh.node(name);
  mkdirSync(root, { recursive: true });
  const args = ['join', '--server', cp.url, '--token', token, '--ca-hash', caPin(cp.config.caData ?? '')];
  const a = await spawnAgentCommand([...args, '--name', name, '--state-dir', stateDir, '--root', root, ...INTERVALS]);
  mesh.track(a.pid);
  return a;
}

/** True when every node's (re-issued) Declaration is acknowledged and applied by its agent. */
async function everyNodeReported(admin: HttpClient): Promise<boolean> {
  for (const n of DRILL_NODES) {
    const d: Declaration | undefined = await admin.get('declarations', n).catch(() => undefined);
    const applied = d?.status?.conditions?.find((c) => c.type === 'Applied');
    if (d?.status?.observedGeneration !== d?.metadata.generation || applied?.status !== 'True') return false;
  }
  return true;
}

/** Runs `mesh-agent set-server URL --state-dir DIR` (through tsx, like the agents). */
export function setServerOf(stateDir: string, url: string): Promise<CliRun> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'agent/main.ts', 'set-server', url, '--state-dir', stateDir],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const out = captureOutput(child);
  return new Promise((resolve) =>
    child.once('close', (code) => resolve({ code, stdout: out.stdout(), stderr: out.stderr() })),
  );
}

/** A client of the restored control plane with the admin's own (kept) meshconfig, pointed at its new URL. */
export function adminClientAt(adminConfig: string, url: string): HttpClient {
  return createClient({ ...loadMeshconfig(adminConfig), server: url });
}

/** Whether a declared file exists under a node's root. */
export function fileUnder(root: string, path: string): boolean {
  return existsSync(join(root, path));
}

/** A Module object with one File (for "new changes flow to the nodes"). */
export function fileModule(name: string, path: string, content: string): KubeObject {
  return moduleObject(name, '1.0.0', [{ id: 'file', kind: 'File', spec: { path, content } }]);
}
