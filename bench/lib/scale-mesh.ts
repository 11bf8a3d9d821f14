/**
 * The scale benchmark's mesh: one real `mesh-control-plane` (spawnControlPlane: HTTPS, the real store) over a
 * data directory holding the bulk fixture (scale-fixture.ts), and `WORKERS` processes of simulated agents
 * (scale-worker.ts) sharing the nodes out. Knows how to SIGKILL and restart the control plane on the same data
 * directory and port, which the agents reconnect to.
 *
 * The control plane is the shipped bundle, dist/mesh-control-plane.js, built first (build-dist.ts): through tsx it
 * took twice as long to start (its module hooks transpile every file on a thread of their own), time the herd
 * counts. `SCALE_CP_FROM_SOURCE=1` runs controllers/main.ts through tsx instead, for CPU profiles that name the
 * source files.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTROL_PLANE_NODE_FLAGS } from '../../test/control-plane-process.ts';
import { spawnControlPlane, type ControlPlaneProcess } from '../../test/harness.ts';
import { buildDist } from './build-dist.ts';
import { createScaleFixture, type NodeCredential } from './scale-fixture.ts';
import type { RoundMark } from './sim-agent.ts';
import type { ScaleWorkerInput, ScaleWorkerMarks, ScaleWorkerReport } from './scale-worker.ts';

const WORKERS = 3;

/** The simulated agents' timings: a heartbeat every 10 s (Mesh.spec.heartbeatInterval's default), logs every 30 s. */
export const AGENT_HEARTBEAT_MS = 10_000;
export const AGENT_LOG_EVERY_MS = 30_000;
/** Every agent starts at a random time within this window after the agents are started. */
export const startSpread = (n: number): number => Math.min(30_000, n * 4);
const WORKER = join(import.meta.dirname, 'scale-worker.ts');
/**
 * The scheduling policy of the simulated agents' processes (SCALE_AGENT_SCHED: `other`, the kernel's default, as
 * started; `idle` or `batch` through util-linux `chrt`, for probes). They stand for N other machines but share this
 * machine's two cores with the control plane: each write of the control plane to an agent wakes an agent process that
 * the kernel may run in its place. At SCHED_IDLE an all-nodes change at N = 5,000 went faster, but only its second
 * round, and the agents, starved in turn, came back from a restart of the control plane much later (N = 500: 17.4 s
 * against 4.5 s; bench/RESULTS.md §9): agents on their own machines would do neither, so the benchmark keeps the
 * kernel's default.
 */
export const AGENT_SCHED = agentSched(process.env.SCALE_AGENT_SCHED ?? 'other');

/** A scheduling policy the simulated agents' processes can run at (AGENT_SCHED). */
export type AgentSched = 'idle' | 'batch' | 'other';

function agentSched(v: string): AgentSched {
  if (v === 'idle' || v === 'batch' || v === 'other') return v;
  throw new Error(`SCALE_AGENT_SCHED must be idle, batch or other, not ${JSON.stringify(v)}`);
}

/** True when SCALE_CP_FROM_SOURCE=1 asks for the control plane through tsx instead of its bundle. */
export const controlPlaneFromSource = (): boolean => process.env.SCALE_CP_FROM_SOURCE === '1';

/** Options of `startScaleMesh`. */
export interface ScaleMeshOptions {
  nodes: number;
  module: string;
  heartbeatIntervalMs: number;
  logEveryMs: number;
  /** Every agent starts at a random time within this window. */
  startSpreadMs: number;
}

/** The running mesh. */
export interface ScaleMesh {
  cp: ControlPlaneProcess;
  credentials: NodeCredential[];
  /** Starts the agents' processes. */
  startAgents(): void;
  /** How many agents are started and how many say the control plane is reachable (latest reports). */
  agents(): ScaleWorkerReport;
  /** Every started agent's newest round mark (sim-agent.ts RoundMark), by node, asked of the worker processes. */
  marks(): Promise<Map<string, RoundMark>>;
  /** The agents' worker processes' pids (to SIGSTOP them: the control plane with its connections open and no request). */
  workerPids(): number[];
  /** SIGKILLs the control plane; resolves once it is gone. */
  kill(): Promise<void>;
  /** Starts the control plane again on the same data directory and address. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Creates the data directory and fixture (a first start makes the PKI, then the fixture is written), starts the control plane. */
export async function startScaleMesh(opts: ScaleMeshOptions): Promise<ScaleMesh> {
  const bundle = !controlPlaneFromSource();
  if (bundle) buildDist('mesh-control-plane.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-bench-scale-'));
  const first = await spawnControlPlane({ dataDir, bundle });
  await first.stop();
  const credentials = await createScaleFixture(dataDir, opts.nodes, opts.module);
  // The control plane runs with the V8 flags of the shipped bundle's shebang, then SCALE_CP_NODE_ARGS: more flags
  // for its node (e.g. `--cpu-prof --cpu-prof-dir /tmp/prof` to profile it; a later flag wins).
  const nodeArgs = [...CONTROL_PLANE_NODE_FLAGS, ...(process.env.SCALE_CP_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const cpArgs = { dataDir, timeoutMs: 120_000, nodeArgs, bundle };
  let cp = await spawnControlPlane(cpArgs);
  const listen = new URL(cp.url).host;
  const workers: ChildProcess[] = [];
  const reports = new Map<number, ScaleWorkerReport>();
  /** Per worker, the callers waiting for its marks, in the order they asked. */
  const marksWaiting: Array<Array<(m: ScaleWorkerMarks) => void>> = [];
  const mesh: ScaleMesh = {
    cp,
    credentials,
    startAgents() {
      for (let w = 0; w < WORKERS; w++) {
        const input: ScaleWorkerInput = {
          config: { server: cp.config.server, caData: cp.config.caData },
          heartbeatIntervalMs: opts.heartbeatIntervalMs,
          logEveryMs: opts.logEveryMs,
          startSpreadMs: opts.startSpreadMs,
          nodes: credentials.filter((_, i) => i % WORKERS === w),
        };
        const file = join(dataDir, `worker-${w}.json`);
        writeFileSync(file, JSON.stringify(input));
        // Without V8's memory reducer, as the control plane runs (its shebang, hack/build.mjs): in a worker a third of
        // the agents share one V8 heap, and the reducer's collections in the quiet minutes before a change dropped the
        // optimized code of their watch and status path, which the change then ran unoptimized on the cores the
        // control plane needs (an agent of a real mesh runs on its own machine). SCALE_WORKER_NODE_ARGS: more Node
        // flags for the workers (e.g. a CPU profile, written when they stop).
        const nodeArgs = [
          '--import',
          'tsx',
          '--no-memory-reducer',
          ...(process.env.SCALE_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
        ];
        // Under another policy, `chrt` sets it and execs Node (the same process; the IPC channel is inherited).
        const child = fork(WORKER, [file], {
          ...(AGENT_SCHED === 'other'
            ? { execArgv: nodeArgs }
            : { execPath: 'chrt', execArgv: [`--${AGENT_SCHED}`, '0', process.execPath, ...nodeArgs] }),
          stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        });
        child.on('message', (m: ScaleWorkerReport | ScaleWorkerMarks) => {
          if ('marks' in m) marksWaiting[w].shift()?.(m);
          else reports.set(w, m);
        });
        workers.push(child);
        marksWaiting.push([]);
      }
    },
    async marks() {
      const answers = await Promise.all(
        workers.map(
          (child, w) =>
            new Promise<ScaleWorkerMarks>((resolve) => {
              marksWaiting[w].push(resolve);
              child.send('marks');
            }),
        ),
      );
      const out = new Map<string, RoundMark>();
      for (const { marks } of answers) for (const [node, mark] of marks) if (mark) out.set(node, mark);
      return out;
    },
    workerPids: () => workers.map((w) => w.pid!),
    agents() {
      const all = [...reports.values()];
      return {
        reachable: all.reduce((s, r) => s + r.reachable, 0),
        started: all.reduce((s, r) => s + r.started, 0),
        total: opts.nodes,
        neverAnswered: all.reduce((s, r) => s + r.neverAnswered, 0),
        lost: all.reduce((s, r) => s + r.lost, 0),
      };
    },
    async kill() {
      await cp.kill();
    },
    async restart() {
      cp = await spawnControlPlane({ ...cpArgs, listen });
      mesh.cp = cp;
    },
    async stop() {
      await Promise.all(
        workers.map(
          (w) =>
            new Promise<void>((resolve) => {
              if (w.exitCode !== null || w.signalCode !== null) return resolve();
              const force = setTimeout(() => w.kill('SIGKILL'), 20_000);
              w.once('exit', () => {
                clearTimeout(force);
                resolve();
              });
              w.send('stop');
            }),
        ),
      );
      await cp.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return mesh;
}

/** The bench's mesh of `nodes` agents with the timings above and one Module (`module`, default `scale`). */
export function startBenchMesh(nodes: number, opts: { module?: string; logEveryMs?: number } = {}): Promise<ScaleMesh> {
  return startScaleMesh({
    nodes,
    module: opts.module ?? 'scale',
    heartbeatIntervalMs: AGENT_HEARTBEAT_MS,
    logEveryMs: opts.logEveryMs ?? AGENT_LOG_EVERY_MS,
    startSpreadMs: startSpread(nodes),
  });
}
