/**
 * Benchmark 4: one change affecting 50 agents. The real control plane (`mesh-control-plane` through the test
 * harness's spawnControlPlane, with its Declaration controller) and 50 in-process agents (createAgent, each
 * with its own store, state dir and root) in this process. One Module (a Directory and a File) is assigned
 * to all 50 nodes; then, round after round, one update of the Module (new version, new file content): the
 * time until every node has reported the new generation applied.
 * Run alone: `node --import tsx bench/agents-fanout.ts` prints the markdown section.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient, type HttpClient } from '../api/client/http-client.ts';
import { silentLogger } from '../api/meta/logger.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { Module } from '../api/v1alpha1/generated/module.ts';
import { createAgent, type Agent } from '../agent/agent.ts';
import { spawnControlPlane, type ControlPlaneProcess } from '../test/harness.ts';
import { isMain } from './lib/child.ts';
import { sleep } from './lib/load.ts';
import { cpuSecondsOf, memoryOf, type MemoryFigures } from './lib/proc.ts';
import { contentOf, RoundTracker, rvOf, versionOf, type RoundMarks } from './lib/round-tracker.ts';
import { renderAgentsFanout } from './lib/agents-fanout-render.ts';

const AGENTS = 50;
const ROUNDS = 20;
const WARMUP_ROUNDS = 2;
const PAUSE_MS = 300;
const ROUND_TIMEOUT_MS = 20_000;
const MODULE = 'fanout';
const RECONCILE_MS = 5000;
const HEARTBEAT_MS = 10_000;

/** One measured round: ms from just before the Module update to each milestone, per node. */
export interface FanoutRound {
  ack: number;
  written: number[];
  applied: number[];
  assigned: number[];
  /** Per node: from its Declaration re-rendered to its applied report. */
  agentPart: number[];
}

/** Everything the section reports. */
export interface FanoutResult {
  rounds: FanoutRound[];
  url: string;
  setupMs: number;
  cpu: { controlPlane: number; agents: number };
  controlPlaneMemory: MemoryFigures;
  agentsMemory: MemoryFigures;
  settings: {
    agents: number;
    rounds: number;
    warmup: number;
    pauseMs: number;
    reconcileMs: number;
    heartbeatMs: number;
  };
}

const nodeName = (i: number): string => `node-${String(i).padStart(2, '0')}`;

function moduleObject(round: number, resourceVersion?: string): Module {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Module',
    metadata: { name: MODULE, ...(resourceVersion ? { resourceVersion } : {}) },
    spec: {
      version: versionOf(round),
      resources: [
        { id: 'dir', kind: 'Directory', spec: { path: '/srv/fanout', mode: '0755' } },
        {
          id: 'config',
          kind: 'File',
          dependsOn: ['dir'],
          spec: { path: '/srv/fanout/config.txt', content: contentOf(round), mode: '0644' },
        },
      ],
    },
  };
}

/** Starts the 50 agents, each with its own state dir and root under `dir`. */
async function startAgents(cp: ControlPlaneProcess, dir: string): Promise<Agent[]> {
  const agents: Agent[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const stateDir = join(dir, nodeName(i), 'state');
    const root = join(dir, nodeName(i), 'root');
    mkdirSync(stateDir, { recursive: true });
    mkdirSync(root, { recursive: true });
    const agent = createAgent({
      stateDir,
      root,
      nodeName: nodeName(i),
      connection: cp.config,
      site: 'bench',
      reconcileIntervalMs: RECONCILE_MS,
      heartbeatIntervalMs: HEARTBEAT_MS,
      metricsListen: false,
      logger: silentLogger,
    });
    agents.push(agent);
    await agent.start();
  }
  return agents;
}

/** Per-node milestones of one round, as ms after `t0`, in node order. */
function relative(marks: RoundMarks, t0: number, ack: number): FanoutRound {
  const of = (m: Map<string, number>): number[] => [...m.values()].map((t) => t - t0);
  const agentPart = [...marks.applied].map(([node, t]) => t - (marks.written.get(node) ?? t));
  return { ack, written: of(marks.written), applied: of(marks.applied), assigned: of(marks.assigned), agentPart };
}

/** One round: updates the Module, waits until all nodes applied it and their Assignments say so. */
async function round(
  client: HttpClient,
  tracker: RoundTracker,
  r: number,
  stored: KubeObject,
): Promise<{ stored: KubeObject; round: FanoutRound }> {
  const all = tracker.expect(r, ROUND_TIMEOUT_MS);
  const t0 = performance.now();
  const next = await client.update('modules', moduleObject(r, rvOf(stored)));
  const ack = performance.now() - t0;
  return { stored: next, round: relative(await all, t0, ack) };
}

/** Runs the warm-up and measured rounds; CPU is counted from the first measured round to a pause after the last. */
async function measure(
  client: HttpClient,
  tracker: RoundTracker,
  stored: KubeObject,
  cp: ControlPlaneProcess,
): Promise<Pick<FanoutResult, 'rounds' | 'cpu'>> {
  const rounds: FanoutRound[] = [];
  let cpBefore = 0;
  let ownBefore = 0;
  for (let r = 1; r <= WARMUP_ROUNDS + ROUNDS; r++) {
    await sleep(PAUSE_MS);
    if (r === WARMUP_ROUNDS + 1) [cpBefore, ownBefore] = [cpuSecondsOf(cp.pid), cpuSecondsOf('self')];
    const out = await round(client, tracker, r, stored);
    stored = out.stored;
    if (r > WARMUP_ROUNDS) rounds.push(out.round);
  }
  await sleep(PAUSE_MS);
  return {
    rounds,
    cpu: {
      controlPlane: (cpuSecondsOf(cp.pid) - cpBefore) / ROUNDS,
      agents: (cpuSecondsOf('self') - ownBefore) / ROUNDS,
    },
  };
}

/** Sets up the mesh (Module, 50 Assignments, 50 agents), waits for round 0 everywhere, then measures. */
async function run(cp: ControlPlaneProcess, dir: string): Promise<FanoutResult> {
  const client = createClient(cp.config);
  const tracker = new RoundTracker(AGENTS);
  let agents: Agent[] = [];
  try {
    const t0 = performance.now();
    await tracker.open(client, (await client.list('declarations')).metadata.resourceVersion);
    const ready = tracker.expect(0, 60_000);
    const stored = await client.create('modules', moduleObject(0));
    for (let i = 0; i < AGENTS; i++) {
      await client.create('assignments', {
        apiVersion: 'meshctl.dev/v1alpha1',
        kind: 'Assignment',
        metadata: { name: `${MODULE}-on-${nodeName(i)}` },
        spec: { module: MODULE, node: nodeName(i) },
      });
    }
    agents = await startAgents(cp, dir);
    await ready;
    const setupMs = performance.now() - t0;
    const measured = await measure(client, tracker, stored, cp);
    return {
      ...measured,
      url: cp.url,
      setupMs,
      controlPlaneMemory: memoryOf(cp.pid),
      agentsMemory: memoryOf('self'),
      settings: {
        agents: AGENTS,
        rounds: ROUNDS,
        warmup: WARMUP_ROUNDS,
        pauseMs: PAUSE_MS,
        reconcileMs: RECONCILE_MS,
        heartbeatMs: HEARTBEAT_MS,
      },
    };
  } finally {
    tracker.close();
    await Promise.all(agents.map((a) => a.stop()));
    client.close();
  }
}

/** Starts the control plane, runs the benchmark, stops everything (by PID) and removes the temp dirs. */
export async function agentsFanoutSection(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-bench-agents-'));
  let cp: ControlPlaneProcess | undefined;
  try {
    cp = await spawnControlPlane();
    return renderAgentsFanout(await run(cp, dir));
  } finally {
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write((await agentsFanoutSection()) + '\n');
}
