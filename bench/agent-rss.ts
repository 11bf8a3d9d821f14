/**
 * Benchmark 6: the memory of a real `mesh-agent` process (the shipped bundle dist/mesh-agent.js, not tsx)
 * holding a Declaration of ~200 resources (Directories, Files and 3 supervised Services), rendered by the real
 * control plane from a Module and an Assignment. Once it applied everything, it reconciles every 100 ms and
 * heartbeats every 500 ms (so that 20 s hold what the default intervals do in ~15 minutes: V8 grows its heap
 * with the allocations made, not with time) while VmRSS is sampled from /proc/<pid>/status. A second agent,
 * run side by side without the shebang's V8 flags, shows what they change.
 * Run alone: `node --import tsx bench/agent-rss.ts` prints the markdown section.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient, type HttpClient } from '../api/client/http-client.ts';
import type { Declaration } from '../api/v1alpha1/generated/declaration.ts';
import type { Module, ModuleResource } from '../api/v1alpha1/generated/module.ts';
import { foreverCommand, killServices, metricValue, servicePid, waitFor } from '../agent/testing.ts';
import { REPO_ROOT, spawnControlPlane, type ControlPlaneProcess } from '../test/harness.ts';
import { buildDist } from './lib/build-dist.ts';
import { isMain } from './lib/child.ts';
import { sleep } from './lib/load.ts';
import { memoryOf, type MemoryFigures } from './lib/proc.ts';
import { renderAgentRss } from './lib/agent-rss-render.ts';

const DIRS = 20;
const FILES_PER_DIR = 9;
const SERVICES = 3;
const RECONCILE = '100ms';
const HEARTBEAT = '500ms';
const STEADY_MS = 20_000;
const SAMPLE_MS = 500;
const AGENT = join(REPO_ROOT, 'dist', 'mesh-agent.js');

/** The Module: 20 Directories with 9 ~0.5 KiB Files each, and 3 long-running Services. */
function moduleObject(): Module {
  const resources: ModuleResource[] = [];
  for (let d = 0; d < DIRS; d++) {
    resources.push({ id: `d${d}`, kind: 'Directory', spec: { path: `/srv/rss/d${d}`, mode: '0755' } });
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const content = `# dir ${d}, file ${f}\n${`key${f}=value-${d}-${f}\n`.repeat(24)}`;
      resources.push({
        id: `d${d}-f${f}`,
        kind: 'File',
        dependsOn: [`d${d}`],
        spec: { path: `/srv/rss/d${d}/f${f}.conf`, content, mode: '0644' },
      });
    }
  }
  for (let s = 0; s < SERVICES; s++) {
    resources.push({
      id: `svc${s}`,
      kind: 'Service',
      dependsOn: ['d0'],
      spec: {
        driver: 'process',
        command: foreverCommand(`bench-rss-svc-${s}`),
        workingDirectory: '/srv/rss/d0',
        restart: 'always',
      },
    });
  }
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Module',
    metadata: { name: 'rss' },
    spec: { version: '1.0.0', resources },
  };
}

/**
 * Runs the bundle and resolves with the child and its metrics URL once it logged "Started agent": `nodeFlags`
 * undefined runs the file itself, as shipped (its shebang starts node with the agent's V8 flags).
 */
async function spawnBundledAgent(
  nodeFlags: string[] | undefined,
  args: string[],
): Promise<{ child: ChildProcess; metrics: string; exited: Promise<unknown> }> {
  const child = nodeFlags
    ? spawn(process.execPath, [...nodeFlags, AGENT, 'run', ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(AGENT, ['run', ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
      });
  let out = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const started = (): Record<string, unknown> | undefined =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'Started agent');
  const ready = await waitFor(
    () => started() ?? (child.exitCode !== null ? 'exited' : undefined),
    20_000,
    'mesh-agent to start',
  ).catch((e: unknown) => {
    child.kill('SIGKILL');
    throw e;
  });
  if (ready === 'exited') throw new Error(`mesh-agent exited before it started:\n${out}`);
  return { child, metrics: String(ready.metrics), exited };
}

/** Reconciles so far and their total seconds, from the agent's /metrics. */
async function reconcileCounters(metrics: string): Promise<{ count: number; sum: number }> {
  const text = await (await fetch(`${metrics}/metrics`)).text();
  return {
    count: metricValue(text, 'meshagent_reconcile_duration_seconds_count') ?? NaN,
    sum: metricValue(text, 'meshagent_reconcile_duration_seconds_sum') ?? NaN,
  };
}

/** How one agent process was started. */
export interface Variant {
  node: string;
  label: string;
  nodeFlags?: string[];
}

const VARIANTS: Variant[] = [
  {
    node: 'rss-shipped',
    label: '`dist/mesh-agent.js` run as shipped (its shebang: `node --max-semi-space-size=1 --optimize-for-size`)',
  },
  { node: 'rss-noflag', label: '`node dist/mesh-agent.js` without those V8 flags (for comparison)', nodeFlags: [] },
];

/** What one variant measured. */
export interface RssFigures {
  variant: Variant;
  resources: number;
  appliedAfterMs: number;
  afterApply: MemoryFigures;
  samples: number[];
  end: MemoryFigures;
  reconciles: { count: number; meanMs: number };
}

async function appliedDeclaration(client: HttpClient, node: string): Promise<Declaration> {
  return waitFor(
    async () => {
      const d = await client.get('declarations', node);
      return d.spec.resources.length > 0 && d.status?.appliedGeneration === d.spec.generation ? d : undefined;
    },
    60_000,
    `${node} to apply its Declaration`,
  );
}

/** Samples the agent's VmRSS every SAMPLE_MS for STEADY_MS; counts its reconciles meanwhile. */
async function sampleSteady(pid: number, metrics: string): Promise<Pick<RssFigures, 'samples' | 'end' | 'reconciles'>> {
  const before = await reconcileCounters(metrics);
  const samples: number[] = [];
  for (let t = 0; t < STEADY_MS; t += SAMPLE_MS) {
    await sleep(SAMPLE_MS);
    samples.push(memoryOf(pid).rssMiB);
  }
  const after = await reconcileCounters(metrics);
  const count = after.count - before.count;
  return { samples, end: memoryOf(pid), reconciles: { count, meanMs: ((after.sum - before.sum) / count) * 1000 } };
}

/** Assigns the Module to the variant's node, runs its agent until applied, then samples its memory; stops it. */
async function measureVariant(
  cp: ControlPlaneProcess,
  client: HttpClient,
  dir: string,
  v: Variant,
): Promise<RssFigures> {
  const stateDir = join(dir, v.node, 'state');
  const root = join(dir, v.node, 'root');
  mkdirSync(root, { recursive: true });
  await client.create('assignments', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Assignment',
    metadata: { name: `rss-on-${v.node}` },
    spec: { module: 'rss', node: v.node },
  });
  const t0 = performance.now();
  let agent: Awaited<ReturnType<typeof spawnBundledAgent>> | undefined;
  try {
    agent = await spawnBundledAgent(v.nodeFlags, [
      '--state-dir',
      stateDir,
      '--name',
      v.node,
      '--config',
      cp.meshconfigPath,
      '--root',
      root,
      '--reconcile-interval',
      RECONCILE,
      '--heartbeat-interval',
      HEARTBEAT,
      '--metrics-listen',
      '127.0.0.1:0',
      '--stop-services-on-exit',
    ]);
    const decl = await appliedDeclaration(client, v.node);
    const appliedAfterMs = performance.now() - t0;
    for (let s = 0; s < SERVICES; s++)
      if (servicePid(stateDir, `rss-on-${v.node}/svc${s}`) === undefined)
        throw new Error(`${v.node}: service svc${s} is not running`);
    const afterApply = memoryOf(agent.child.pid!);
    const steady = await sampleSteady(agent.child.pid!, agent.metrics);
    return { variant: v, resources: decl.spec.resources.length, appliedAfterMs, afterApply, ...steady };
  } finally {
    if (agent) await stopAgent(agent.child, agent.exited);
    killServices(stateDir);
  }
}

/** SIGTERM (the agent stops its services, --stop-services-on-exit), SIGKILL after 10 s. */
async function stopAgent(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** VmRSS of an idle `node -e` (no module loaded), for reference. */
async function bareNodeRss(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)'], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await sleep(500);
    return memoryOf(child.pid!).rssMiB;
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Runs both variants side by side against one control plane. */
async function measure(cp: ControlPlaneProcess, dir: string): Promise<RssFigures[]> {
  const client = createClient(cp.config);
  try {
    await client.create('modules', moduleObject());
    return await Promise.all(VARIANTS.map((v) => measureVariant(cp, client, dir, v)));
  } finally {
    client.close();
  }
}

/** Builds dist/, starts the control plane, measures, stops everything (by PID) and removes the temp dirs. */
export async function agentRssSection(): Promise<string> {
  const built = buildDist('mesh-agent.js');
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-bench-rss-'));
  let cp: ControlPlaneProcess | undefined;
  try {
    cp = await spawnControlPlane();
    const figures = await measure(cp, dir);
    return renderAgentRss({
      figures,
      bareNodeMiB: await bareNodeRss(),
      built,
      settings: { reconcile: RECONCILE, heartbeat: HEARTBEAT, steadyMs: STEADY_MS, sampleMs: SAMPLE_MS },
    });
  } finally {
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write((await agentRssSection()) + '\n');
}
