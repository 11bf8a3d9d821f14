/**
 * Shared helpers of the mesh e2e tests (test/e2e/mesh-*.test.ts): a temp "mesh" of real `mesh-control-plane`
 * and `mesh-agent` processes that is torn down by PID however the test ends, Module/Assignment objects,
 * and what the tests look at on disk: /proc (is a pid running, its argv, its cwd), agent log lines, and
 * the real meshctl CLI (through tsx, like the agent and control plane the harness spawns).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import { ApiError } from '../../api/meta/api-error.ts';
import type { Condition, KubeObject } from '../../api/meta/types.ts';
import {
  cmdline,
  isRunning,
  killServices,
  pidsWithTag,
  spawnAgent,
  waitFor,
  type AgentProcess,
} from '../../agent/testing.ts';

// The process probes live in agent/testing.ts (the agent's own tests use them too); re-exported for the e2e tests.
export { cmdline, isRunning, pidsWithTag };
import {
  captureOutput,
  REPO_ROOT,
  spawnControlPlane,
  type ControlPlaneProcess,
  type SpawnOptions,
} from '../harness.ts';

/** Short agent intervals, so drift correction and heartbeats are seen within a second. */
export const INTERVALS = ['--reconcile-interval', '300ms', '--heartbeat-interval', '300ms'];

/** A tag unique to this test run, put into service commands so /proc tells our processes apart. */
export const RUN_TAG = `mesh-e2e-${process.pid}-${Date.now().toString(36)}`;

/** One node's directories: the agent's state dir and the root its declared paths resolve under. */
export interface NodeDirs {
  stateDir: string;
  root: string;
}

/** A mesh of real processes in a temp dir, cleaned up by `t.after`. */
export interface Mesh {
  dir: string;
  /** Starts a control plane (data dir `<dir>/cp`, so a restart with the same `listen` reuses its store). */
  controlPlane(opts?: Pick<SpawnOptions, 'listen'>): Promise<ControlPlaneProcess>;
  /** An admin client of a control plane (closed at teardown). */
  admin(cp: ControlPlaneProcess): HttpClient;
  node(name: string): NodeDirs;
  /** Starts node `name`'s agent: first start with name, root and credential; later starts from its store alone. */
  agent(name: string, cp?: ControlPlaneProcess): Promise<AgentProcess>;
  /** Registers another process of ours to SIGKILL at teardown. */
  track(pid: number): void;
}

/** Creates a mesh whose processes (agents, control planes, services by pid file and by RUN_TAG) and temp dir go at teardown. */
export function createMesh(t: { after(fn: () => Promise<void>): void }): Mesh {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-mesh-e2e-'));
  const agents: AgentProcess[] = [];
  const cps: ControlPlaneProcess[] = [];
  const clients: HttpClient[] = [];
  const started = new Set<string>();
  const pids: number[] = [];
  const node = (name: string): NodeDirs => ({ stateDir: join(dir, name, 'state'), root: join(dir, name, 'root') });
  t.after(async () => {
    for (const c of clients) c.close();
    await Promise.all(agents.map((a) => a.kill('SIGKILL')));
    await Promise.all(cps.map((cp) => cp.kill()));
    for (const name of started) killServices(node(name).stateDir);
    const killed = [...pids, ...pidsWithTag(RUN_TAG)];
    for (const pid of killed) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    // A SIGKILLed process may still be creating files for a moment: remove the dir once they are all gone.
    await waitFor(() => killed.every((pid) => !isRunning(pid)), 10_000, 'the killed processes to be gone');
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  });
  return {
    dir,
    async controlPlane(opts = {}) {
      const cp = await spawnControlPlane({ dataDir: join(dir, 'cp'), ...opts });
      cps.push(cp);
      return cp;
    },
    admin(cp) {
      const c = createClient(cp.config);
      clients.push(c);
      return c;
    },
    node,
    async agent(name, cp) {
      const { stateDir, root } = node(name);
      const first = !started.has(name);
      started.add(name);
      if (first) mkdirSync(root, { recursive: true });
      const args = ['--state-dir', stateDir, ...INTERVALS];
      if (first) args.push('--name', name, '--root', root, '--config', cp!.meshconfigPath);
      const a = await spawnAgent(args);
      agents.push(a);
      return a;
    },
    track: (pid) => void pids.push(pid),
  };
}

/** A Module object. */
export function moduleObject(name: string, version: string, resources: unknown[]): KubeObject {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Module', metadata: { name }, spec: { version, resources } };
}

/** An Assignment object (pinned to `version` when given). */
export function assignmentObject(name: string, module: string, node: string, version?: string): KubeObject {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Assignment',
    metadata: { name },
    spec: { module, node, ...(version ? { version } : {}) },
  };
}

/** Creates `obj`, or replaces the spec of the existing object of that name. */
export async function applyObject(client: HttpClient, plural: string, obj: KubeObject): Promise<KubeObject> {
  try {
    return await client.create(plural, obj);
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== 409) throw e;
    const cur = await client.get(plural, obj.metadata.name!);
    return client.update(plural, {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion },
    });
  }
}

/** The Applied condition and rendered version of an assignment. */
export async function assignmentState(
  client: HttpClient,
  name: string,
): Promise<{ applied?: Condition; version?: string }> {
  const a = (await client.get('assignments', name)) as KubeObject & {
    status?: { version?: string; conditions?: Condition[] };
  };
  return { applied: a.status?.conditions?.find((c) => c.type === 'Applied'), version: a.status?.version };
}

/** Waits until the assignment is Applied=True at `version`. */
export async function waitApplied(
  client: HttpClient,
  name: string,
  version: string,
  timeoutMs = 20_000,
): Promise<void> {
  await waitFor(
    async () => {
      const s = await assignmentState(client, name);
      return s.applied?.status === 'True' && s.version === version;
    },
    timeoutMs,
    `assignment ${name} Applied=True at version ${version}`,
  );
}

/** The complete JSON log lines an agent wrote so far (a line still being written is left out). */
export function logLines(agent: AgentProcess): Array<Record<string, unknown>> {
  const text = agent.output();
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The working directory of a process, or undefined. */
export function cwdOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

/** A service command that runs forever, tagged with RUN_TAG and `label` (visible in /proc/<pid>/cmdline). */
export function taggedCommand(label: string): string[] {
  return [process.execPath, '-e', `/* ${RUN_TAG}-${label} */ setInterval(() => {}, 1e9)`];
}

/** What one meshctl run did. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real meshctl (`cli/main.ts` through tsx) with `--config`, without MESHCONFIG from the environment. */
export function meshctl(config: string, args: string[], timeoutMs = 30_000): Promise<CliRun> {
  const env = { ...process.env };
  delete env.MESHCONFIG;
  delete env.MESHCTL_DEBUG;
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', '--config', config, ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = captureOutput(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: out.stdout(), stderr: out.stderr() });
    }),
  );
}
