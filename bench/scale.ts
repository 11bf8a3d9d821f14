/**
 * Benchmark 8 (issue 14): one control plane, N simulated agents. For each N (default 500, 1,000, 2,000, 5,000;
 * `SCALE_NODES=50,200` to choose), side by side in one run: a fresh `mesh-control-plane` (HTTPS, real store) over
 * the bulk fixture (bench/lib/scale-fixture.ts), agents in 3 processes (bench/lib/scale-worker.ts) doing what
 * mesh-agent does on the wire, and then: control-plane CPU idle (N nodes stored, no agent yet) and while the
 * agents only heartbeat; RSS; a change to one Module assigned to every node until every node reported it applied;
 * one node's change until applied; `meshctl get nodes` and `meshctl get nodes <one>`; CPU with the agents' processes
 * stopped (the floor); and the thundering herd —
 * SIGKILL, restart, time until every Node is Reachable with a heartbeat since the kill. Throughout, the
 * control plane's RSS (anon/file), V8 heap and CPU are sampled every second by phase (lib/scale-memory.ts).
 * Run alone: `node --import tsx bench/scale.ts` prints the markdown section.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createClient, type HttpClient } from '../api/client/http-client.ts';
import type { KubeObject } from '../api/meta/types.ts';
import { isMain } from './lib/child.ts';
import { buildDist } from './lib/build-dist.ts';
import { sleep } from './lib/load.ts';
import { cpuSnapshot } from './lib/machine.ts';
import { cpuSecondsOf, memoryOf } from './lib/proc.ts';
import { memoryLines, MemoryPhases } from './lib/scale-memory.ts';
import { agentRoundTimes, RoundTracker, rvOf } from './lib/round-tracker.ts';
import { simNodeName } from './lib/scale-fixture.ts';
import {
  AGENT_HEARTBEAT_MS,
  AGENT_SCHED,
  AGENT_LOG_EVERY_MS,
  controlPlaneFromSource,
  startBenchMesh,
  startSpread,
  type ScaleMesh,
} from './lib/scale-mesh.ts';
import {
  agentsStoppedCpu,
  cpuPercent,
  ratesBetween,
  requestCounts,
  FLOOR_MS,
  fanoutModule,
  soloModule,
  timeMeshctl,
  waitAllBack,
  waitFirstLogs,
  waitNodesSettled,
  waitOverlayAddresses,
  waitSoloApplied,
} from './lib/scale-probes.ts';
import { renderScale, type RoundCpu, type ScaleRow } from './lib/scale-render.ts';
import { summarize } from './lib/stats.ts';
import { persistInterval } from '../api/server/access/node-leases.ts';
import { journalMark, writesSince, type JournalMark } from './lib/journal-lines.ts';

const MODULE = 'scale';
const SOLO = 'solo';
/**
 * The heartbeat CPU window: a multiple of both the heartbeat interval and the log period, so that each agent's
 * heartbeats and log POSTs are all counted once per period whatever its phase (a 20 s window caught one or two of the
 * log bursts, which arrive spread only over the agents' start window). The heartbeat phase is measured over
 * consecutive such windows, reported as their mean and their range: on this shared machine consecutive 20 s windows
 * of the same steady load ranged from 25 to 35 % of a core at N = 5,000, so one short window said as much about the
 * machine as about the control plane.
 */
const CPU_WINDOW_MS = 30_000;
/**
 * How many windows the heartbeat phase spans: at least two, and at least one lease persist interval
 * (api/server/access/node-leases.ts: 200 s at N = 5,000), so that every node's periodic lease persist falls in it
 * once. The persists come in waves as long as the agents took to start, not evenly at their average rate (25 a
 * second at N = 5,000): a 60 s window held none of them in one run and 5 in another.
 */
function heartbeatWindowCount(n: number): number {
  return Math.max(2, Math.ceil(persistInterval(n) / CPU_WINDOW_MS));
}
const FANOUT_ROUNDS = 2;
const SOLO_ROUNDS = 5;
const HERD_TIMEOUT_MS = 180_000;
/**
 * `SCALE_DEADLINE` (a date) or `SCALE_BUDGET_S` (seconds from now): when the run must end; every wait is cut to
 * it, and an N that cannot start before it is reported as not run.
 */
const DEADLINE = process.env.SCALE_DEADLINE
  ? Date.parse(process.env.SCALE_DEADLINE)
  : Date.now() + Number(process.env.SCALE_BUDGET_S ?? 86_400) * 1000;
/** `ms`, or what is left of the budget when that is less. */
const within = (ms: number): number => Math.max(1000, Math.min(ms, DEADLINE - Date.now()));

/** The sum of the rates whose key `pick` chooses. */
const sumRates = (rates: Map<string, number>, pick: (key: string) => boolean): number =>
  [...rates].reduce((a, [k, v]) => (pick(k) ? a + v : a), 0);

/** Waits until every agent is started and reaches the control plane; resolves with the ms it took. */
async function agentsUp(mesh: ScaleMesh, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const a = mesh.agents();
    if (a.reachable === a.total) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs)
      throw new Error(
        `agents up: ${a.reachable} of ${a.total} after ${timeoutMs} ms ` +
          `(${a.total - a.started} not started, ${a.neverAnswered} never answered, ${a.lost} lost contact)`,
      );
    await sleep(500);
  }
}

/** CPU-seconds used so far by the control plane, by the simulated agents' processes and by the whole machine. */
function cpuNow(mesh: ScaleMesh): RoundCpu {
  return {
    controlPlane: cpuSecondsOf(mesh.cp.pid),
    agents: mesh.workerPids().reduce((sum, pid) => sum + cpuSecondsOf(pid), 0),
    machine: cpuSnapshot().machineBusy,
  };
}

/**
 * Rounds of the all-nodes change: per node, ms from the update to its applied report; and per round, from the update
 * until every node reported it Applied on its Assignment, the CPU-seconds the control plane, the agents' processes
 * and the whole machine used (they share its cores, so a round's time depends on what the agents cost too).
 */
async function fanout(mesh: ScaleMesh, client: HttpClient, tracker: RoundTracker, stored: KubeObject, n: number) {
  const applied: number[] = [];
  const all: number[] = [];
  const cpu: RoundCpu[] = [];
  for (let r = 1; r <= FANOUT_ROUNDS; r++) {
    const done = tracker.expect(r, within(60_000 + n * 12));
    const c0 = cpuNow(mesh);
    const t0 = performance.now();
    stored = await client.update('modules', fanoutModule(r, rvOf(stored)));
    try {
      await done;
      const c1 = cpuNow(mesh);
      const times = agentRoundTimes(await mesh.marks(), r, performance.timeOrigin + t0).applied;
      if (times.length < n) throw new Error(`round ${r}: ${times.length} of ${n} agents saw their report acknowledged`);
      applied.push(...times);
      all.push(Math.max(...times));
      cpu.push({
        controlPlane: c1.controlPlane - c0.controlPlane,
        agents: c1.agents - c0.agents,
        machine: c1.machine - c0.machine,
      });
    } catch (e) {
      // A round that does not complete is the figure: reported, and no further round is tried.
      return { applied: summarize(applied.length ? applied : [NaN]), allMs: all, cpu, failed: (e as Error).message };
    }
    await sleep(1000);
  }
  return { applied: summarize(applied), allMs: all, cpu };
}

/** Rounds of one node's change: ms from the update of its own Module to its applied report. */
async function solo(client: HttpClient, stored: KubeObject): Promise<number[]> {
  const out: number[] = [];
  for (let r = 1; r <= SOLO_ROUNDS; r++) {
    const t0 = performance.now();
    stored = await client.update('modules', soloModule(SOLO, r, rvOf(stored)));
    await waitSoloApplied(client, simNodeName(0), r, within(30_000));
    out.push(performance.now() - t0);
    await sleep(200);
  }
  return out;
}

/** The whole measurement for one N. */
async function measureN(n: number): Promise<ScaleRow> {
  const setup0 = performance.now();
  const mesh = await startBenchMesh(n, { module: MODULE });
  let client = createClient(mesh.cp.config);
  const tracker = new RoundTracker(n);
  const problems: string[] = [];
  const memory = new MemoryPhases(() => ({ pid: mesh.cp.pid, config: mesh.cp.config }));
  memory.phase('idle (no agent)');
  try {
    const idleCpu = await cpuPercent(mesh.cp.pid, AGENT_HEARTBEAT_MS);
    const idleRss = memoryOf(mesh.cp.pid).rssMiB;
    // The Assignments only: each node's applied time is its agent's (sim-agent.ts RoundMark), so that no admin watch of
    // every Declaration (two events per node and change) loads the control plane and the machine during the change.
    await tracker.open(client, (await client.list('meshes')).metadata.resourceVersion, { declarations: false });
    const ready = tracker
      .expect(0, within(180_000 + n * 40))
      .catch((e: unknown) => void problems.push(`round 0 (setup): ${(e as Error).message}`));
    let stored: KubeObject = await client.create('modules', fanoutModule(0));
    const soloStored = await client.create('modules', soloModule(SOLO, 0));
    const a = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Assignment' } as const;
    await client.create('assignments', {
      ...a,
      metadata: { name: 'solo-on-0' },
      spec: { module: SOLO, node: simNodeName(0) },
    });
    memory.phase('setup (agents start)');
    mesh.startAgents();
    const started = performance.now();
    const upMs = await agentsUp(mesh, within(180_000 + n * 40));
    await ready;
    const setupMs = performance.now() - setup0;
    memory.phase('overlay addresses, first logs');
    const overlayMs = await waitOverlayAddresses(client, within(600_000)).catch((e: unknown) => {
      problems.push(`overlay addresses: ${(e as Error).message}`);
      return NaN;
    });
    // A node's first log POST creates its log directory and reads its cursor (one-time work: at N = 1,000 the first
    // round of log POSTs cost the control plane ~50 % of a core for 4 s, later rounds a few %). The heartbeat window
    // starts once every agent's first ship time has passed and N log POSTs were counted.
    const firstLogsMs = await waitFirstLogs(client, n, started + startSpread(n) + AGENT_LOG_EVERY_MS, within(120_000));
    memory.phase('heartbeat');
    await sleep(AGENT_HEARTBEAT_MS);
    const counted = await requestCounts(client);
    const t0 = performance.now();
    const [journal, logged] = [journalMark(mesh.cp.dataDir), mesh.cp.output().length];
    const heartbeatWindows: number[] = [];
    for (let i = heartbeatWindowCount(n); i > 0; i--)
      heartbeatWindows.push(await cpuPercent(mesh.cp.pid, CPU_WINDOW_MS));
    const heartbeatWrites = storeWritesSince(journal, mesh.cp.output().slice(logged));
    const heartbeatCpu = summarize(heartbeatWindows).mean;
    const rates = ratesBetween(counted, await requestCounts(client), (performance.now() - t0) / 1000);
    const steadyRss = memoryOf(mesh.cp.pid).rssMiB;
    memory.phase('all-nodes change');
    const fan = await fanout(mesh, client, tracker, stored, n);
    // One node's change is measured on a settled mesh, not while the Node controller still writes the statuses
    // of the all-nodes change (at N = 5,000 some 15 s of writes after the last node applied it).
    await waitNodesSettled(client, within(120_000)).catch((e: unknown) => {
      problems.push(`Node statuses after the all-nodes change: ${(e as Error).message}`);
    });
    memory.phase("one node's change");
    const soloMs = await solo(client, soloStored).catch((e: unknown) => {
      problems.push(`one node's change: ${(e as Error).message}`);
      return [NaN];
    });
    const one = simNodeName(0);
    // A meshctl run that fails is reported (NaN), and the herd is still measured.
    const timed = (args: string[], check: (o: string) => boolean): Promise<number> =>
      timeMeshctl(mesh.cp.meshconfigPath, args, check).catch((e: unknown) => {
        problems.push(`meshctl ${args.join(' ')}: ${(e as Error).message}`);
        return NaN;
      });
    memory.phase('meshctl get');
    const getAll: number[] = [];
    for (let i = 0; i < 3; i++) getAll.push(await timed(['get', 'nodes'], (o) => o.split('\n').length > n));
    const getOne: number[] = [];
    for (let i = 0; i < 5; i++) getOne.push(await timed(['get', 'nodes', one], (o) => o.includes(one)));
    // The floor comes last before the herd: stopping and resuming the agents puts their heartbeats in step (every
    // overdue timer fires at SIGCONT), and a change measured after it met the whole mesh's heartbeats in bursts.
    memory.phase('agents stopped (floor)');
    const floorCpu = await agentsStoppedCpu(mesh, FLOOR_MS);
    const peakBeforeKill = memoryOf(mesh.cp.pid).hwmMiB;
    tracker.close();
    client.close();
    memory.phase('herd');
    const killedAt = Date.now();
    const herd0 = performance.now();
    await mesh.kill();
    await mesh.restart();
    const servingMs = performance.now() - herd0;
    client = createClient(mesh.cp.config);
    const back = await waitAllBack(client, killedAt, herd0, within(HERD_TIMEOUT_MS));
    // The workers report every second: give the last reports time to arrive.
    for (let i = 0; i < 20 && mesh.agents().reachable < n; i++) await sleep(500);
    const agentsBack = mesh.agents();
    memory.phase('after the herd');
    await sleep(2000);
    const byPhase = await memory.stop();
    for (const line of memoryLines(byPhase)) process.stderr.write(`bench: scale N=${n} memory: ${line}\n`);
    return {
      n,
      setupMs,
      upMs,
      idleCpu,
      heartbeatCpu,
      heartbeatWindows,
      heartbeatWrites,
      floorCpu,
      heartbeatsPerSec: sumRates(rates, (k) => k.startsWith('node ') && k.endsWith(' nodes/status')),
      agentRequestsPerSec: sumRates(rates, (k) => k.startsWith('node ')),
      adminRequestsPerSec: sumRates(rates, (k) => k.startsWith('admin ')),
      overlayMs,
      firstLogsMs,
      rss: { idle: idleRss, steady: steadyRss, peakBeforeKill, peakAfterRestart: memoryOf(mesh.cp.pid).hwmMiB },
      fanout: fan,
      solo: summarize(soloMs),
      getAll: summarize(getAll),
      getOne: summarize(getOne),
      herd: {
        servingMs,
        allBackMs: back.ms,
        back99Ms: back.ms99,
        left: back.left,
        agentsReachable: agentsBack.reachable,
      },
      load: loadavg()[0],
      memory: byPhase,
      problems: [
        ...(fan.failed ? [`all-nodes change: ${fan.failed}`] : []),
        ...problems,
        ...(back.left > 0 ? [`herd: ${back.left} Node(s) not back, e.g. ${back.sample.join('; ')}`] : []),
      ],
    };
  } finally {
    await memory.stop();
    tracker.close();
    client.close();
    await mesh.stop();
  }
}

/** Runs every N in turn and renders the section. */
export async function scaleSection(): Promise<string> {
  const built = buildDist('meshctl.js');
  const ns = (process.env.SCALE_NODES ?? '500,1000,2000,5000').split(',').map(Number);
  const rows: ScaleRow[] = [];
  const loads: string[] = [];
  const failed: string[] = [];
  for (const n of ns) {
    process.stderr.write(`bench: scale N=${n}\n`);
    loads.push(
      loadavg()
        .map((l) => l.toFixed(1))
        .join('/'),
    );
    if (DEADLINE - Date.now() < 90_000) {
      failed.push(`N = ${n} was not run: the time budget (SCALE_DEADLINE / SCALE_BUDGET_S) ran out`);
      continue;
    }
    try {
      rows.push(await measureN(n));
    } catch (e) {
      failed.push(`N = ${n} did not complete: ${(e as Error).message}`);
    }
  }
  return renderScale(
    rows,
    {
      built,
      cpFromSource: controlPlaneFromSource(),
      agentSched: AGENT_SCHED,
      heartbeatMs: AGENT_HEARTBEAT_MS,
      logEveryMs: AGENT_LOG_EVERY_MS,
      loads,
      rounds: { fanout: FANOUT_ROUNDS, solo: SOLO_ROUNDS },
    },
    failed,
  );
}

if (isMain(import.meta.url)) {
  process.stdout.write((await scaleSection()) + '\n');
}

/** The store's writes since `journal`, by resource, and the compactions its log (`logged`) says started. */
function storeWritesSince(journal: JournalMark, logged: string): string {
  const writes = [...writesSince(journal)].map(([plural, n]) => `${n} ${plural}`).join(', ') || 'none';
  return `${writes}; ${logged.split('Started compaction').length - 1} compaction(s)`;
}
