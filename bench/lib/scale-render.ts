/**
 * The markdown of the scale benchmark (bench/scale.ts): one column per N, the issue's targets judged at the
 * largest N measured.
 */
import type { AgentSched } from './scale-mesh.ts';
import { ms, verdict, type LatencySummary } from './stats.ts';
import { CONTROL_PLANE_NODE_FLAGS } from '../../test/control-plane-process.ts';
import { mib } from './proc.ts';
import { memoryLines, type PhaseMemory } from './scale-memory.ts';

/** Everything measured for one N. */
export interface ScaleRow {
  n: number;
  setupMs: number;
  upMs: number;
  idleCpu: number;
  /** The mean of `heartbeatWindows`. */
  heartbeatCpu: number;
  /** The control plane's CPU in each consecutive window of the heartbeat phase, % of a core. */
  heartbeatWindows: number[];
  /** The store's writes over those windows, by resource, and the compactions that started meanwhile. */
  heartbeatWrites: string;
  /** With the agents' processes stopped (connections and watches open, no request), % of a core. */
  floorCpu: number;
  /** Agents' status writes to their Node counted by the control plane during the heartbeat window, per second. */
  heartbeatsPerSec: number;
  /** Every request of the agents counted during the heartbeat window, per second. */
  agentRequestsPerSec: number;
  /** The admin's requests (the controllers', in process, and the bench's own /metrics) in that window, per second. */
  adminRequestsPerSec: number;
  /** From round 0 applied until every Node had its overlay address (the heartbeat window starts after it). */
  overlayMs: number;
  /** Then until every agent shipped its first logs (each node's first log POST opens its log directory). */
  firstLogsMs: number;
  rss: { idle: number; steady: number; peakBeforeKill: number; peakAfterRestart: number };
  fanout: { applied: LatencySummary; allMs: number[]; cpu: RoundCpu[]; failed?: string };
  solo: LatencySummary;
  getAll: LatencySummary;
  getOne: LatencySummary;
  herd: { servingMs: number; allBackMs: number; back99Ms: number; left: number; agentsReachable: number };
  /** 1-minute load average at the end of this N. */
  load: number;
  /** What did not complete (a phase that timed out), in words. */
  problems: string[];
  /** The control plane's memory and CPU by phase (bench/lib/scale-memory.ts). */
  memory: PhaseMemory[];
}

/** CPU-seconds used during one round of the all-nodes change (bench/scale.ts `fanout`). */
export interface RoundCpu {
  controlPlane: number;
  /** The simulated agents' worker processes together. */
  agents: number;
  /** Every process of the machine (/proc/stat), the bench's own included. */
  machine: number;
}

/** How the run was set up. */
export interface ScaleSettings {
  built: string;
  /** The control plane ran from source through tsx (SCALE_CP_FROM_SOURCE=1) rather than as its shipped bundle. */
  cpFromSource: boolean;
  /** The simulated agents' processes' scheduling policy (scale-mesh.ts AGENT_SCHED). */
  agentSched: AgentSched;
  heartbeatMs: number;
  logEveryMs: number;
  /** Load averages (1/5/15) when each N started. */
  loads: string[];
  rounds: { fanout: number; solo: number };
}

/** How the agents' processes were scheduled, as the setup paragraph says it. */
function schedText(policy: AgentSched): string {
  if (policy === 'other')
    return "at the kernel's default scheduling policy, sharing the two cores with the control plane";
  const name = policy === 'idle' ? 'SCHED_IDLE' : 'SCHED_BATCH';
  return `at ${name} (\`SCALE_AGENT_SCHED\`), so that they, standing for N other machines, do not take the control plane's cores from it`;
}

const s = (x: number): string => (Number.isFinite(x) ? (x / 1000).toFixed(1) : 'n/a');
const pct = (x: number): string => `${x.toFixed(1)} %`;

/** Table rows: a label and one cell per N. */
function table(rows: ScaleRow[]): string[] {
  const line = (label: string, f: (r: ScaleRow) => string): string => `| ${label} | ${rows.map(f).join(' | ')} |`;
  const cpuPerBeat = (r: ScaleRow): string => `${ms((r.heartbeatCpu * 10) / Math.max(1, r.heartbeatsPerSec))} ms`;
  return [
    `| N agents | ${rows.map((r) => `**${r.n}**`).join(' | ')} |`,
    `|---|${rows.map(() => '---').join('|')}|`,
    line('setup: fixture, start, all agents up and round 0 applied (s)', (r) => s(r.setupMs)),
    line('agents all reachable after their start (s)', (r) => s(r.upMs)),
    line('control-plane CPU in its first 10 s, no agent yet (controllers render N Declarations), % of a core', (r) =>
      pct(r.idleCpu),
    ),
    line(
      'after round 0 was applied: until every Node had its overlay address / then every agent had shipped logs (s)',
      (r) => `${s(r.overlayMs)} / ${s(r.firstLogsMs)}`,
    ),
    line(
      'control-plane CPU with N agents heartbeating (from 10 s after that, over at least a lease persist interval: 30 s windows, as many as it takes), % of a core: the mean (the range of its windows; their number)',
      (r) =>
        `**${pct(r.heartbeatCpu)}** (${pct(Math.min(...r.heartbeatWindows))} – ${pct(Math.max(...r.heartbeatWindows))}; ${r.heartbeatWindows.length})`,
    ),
    line(
      'store writes (journal lines by resource) and compactions started over those windows',
      (r) => r.heartbeatWrites,
    ),
    line(
      'heartbeats / all agent requests / admin (controller, /metrics) requests per second, counted in that window',
      (r) =>
        `${r.heartbeatsPerSec.toFixed(0)} / ${r.agentRequestsPerSec.toFixed(0)} / ${r.adminRequestsPerSec.toFixed(0)}`,
    ),
    line('control-plane CPU with the agents stopped (connections and watches open, no request), % of a core', (r) =>
      pct(r.floorCpu),
    ),
    line('control-plane CPU per heartbeat (incl. its watch, status and log traffic)', cpuPerBeat),
    line(
      'control-plane RSS after 10 s / with N agents heartbeating (MiB)',
      (r) => `${mib(r.rss.idle)} / ${mib(r.rss.steady)}`,
    ),
    line(
      'control-plane peak RSS before the kill / after the restart (MiB)',
      (r) => `**${mib(r.rss.peakBeforeKill)}** / **${mib(r.rss.peakAfterRestart)}**`,
    ),
    line(
      'all-nodes change: per-node applied p50 / p99 (ms)',
      (r) => `${ms(r.fanout.applied.p50)} / **${ms(r.fanout.applied.p99)}**`,
    ),
    line('all-nodes change: until the last node applied, per round (s)', (r) => r.fanout.allMs.map(s).join(', ')),
    line(
      "all-nodes change: CPU-seconds per round (until every Assignment Applied), control plane / agents' processes / machine",
      (r) =>
        r.fanout.cpu
          .map((c) => `${c.controlPlane.toFixed(1)} / ${c.agents.toFixed(1)} / ${c.machine.toFixed(1)}`)
          .join('; '),
    ),
    line("one node's change: applied p50 / p99 (ms)", (r) => `${ms(r.solo.p50)} / **${ms(r.solo.p99)}**`),
    line('`meshctl get nodes` (N rows) p50 / max (ms)', (r) => `**${ms(r.getAll.p50)}** / ${ms(r.getAll.max)}`),
    line('`meshctl get nodes <one>` p50 / max (ms)', (r) => `${ms(r.getOne.p50)} / ${ms(r.getOne.max)}`),
    line('herd: SIGKILL → restarted and serving (s)', (r) => s(r.herd.servingMs)),
    line(
      'herd: SIGKILL → every Node Reachable with a heartbeat since the kill (s)',
      (r) => `**${s(r.herd.allBackMs)}**`,
    ),
    line('herd: SIGKILL → 99 % of Nodes back (s)', (r) => s(r.herd.back99Ms)),
    line('herd: Nodes not back at the end / agents reachable', (r) => `${r.herd.left} / ${r.herd.agentsReachable}`),
    line('load average (1 min) at the end of this N', (r) => r.load.toFixed(1)),
  ];
}

/** The targets of issue 14, judged at the largest N. */
function targets(rows: ScaleRow[]): string[] {
  if (rows.length === 0) return ['No N completed: every target **FAIL**.'];
  const r = rows.reduce((a, b) => (b.n > a.n ? b : a));
  const rss = Math.max(r.rss.peakBeforeKill, r.rss.peakAfterRestart);
  return [
    `Targets (issue 14, at N = 5,000; judged here at N = ${r.n}${r.n < 5000 ? ', **smaller than the target N**' : ''}):`,
    '',
    `- control-plane peak RSS ${mib(rss)} MiB ≤ 1,024 MiB: ${verdict(rss <= 1024)}`,
    `- heartbeat CPU ${pct(r.heartbeatCpu)} ≤ 25 % of one core: ${verdict(r.heartbeatCpu <= 25)}`,
    `- all-nodes change applied p99 ${ms(r.fanout.applied.p99)} ms ≤ 5,000 ms: ${verdict(r.fanout.applied.p99 <= 5000 && !r.fanout.failed)}`,
    `- one node's change p99 ${ms(r.solo.p99)} ms ≤ 200 ms (regardless of N): ${verdict(rows.every((x) => x.solo.p99 <= 200))}`,
    `- \`meshctl get nodes\` (${r.n} rows) p50 ${ms(r.getAll.p50)} ms ≤ 1,000 ms: ${verdict(r.getAll.p50 <= 1000)}`,
    `- after SIGKILL and restart, every Node Reachable in ${s(r.herd.allBackMs)} s ≤ 60 s, none stuck: ${verdict(r.herd.allBackMs <= 60_000 && r.herd.left === 0)}`,
  ];
}

/** The section. */
export function renderScale(rows: ScaleRow[], set: ScaleSettings, failed: string[]): string {
  return [
    '## 9. Scale: one control plane, N simulated agents (issue 14)',
    '',
    'One real `mesh-control-plane` (HTTPS, the real store, every controller) per N, over the bulk fixture',
    '(`bench/lib/scale-fixture.ts`: N Nodes with credentials issued as `POST /join` issues them, and an Assignment of',
    `one Module to each). The agents are simulated in 3 separate processes (\`bench/lib/scale-worker.ts\`; ${schedText(set.agentSched)}; like the control plane, without V8's memory reducer) by the`,
    "agent's own link code (`agent/sync`: Node check, Declaration list+watch, heartbeat, Declaration status after",
    `applying, outbox) over an in-memory store, each with its own credential; heartbeat every ${set.heartbeatMs / 1000} s`,
    `(Mesh.spec.heartbeatInterval's default; as the agent does, one that would only repeat what the control plane has is`,
    `skipped after a log POST renewed the lease), two log lines shipped every ${set.logEveryMs / 1000} s per agent (the first at a random point`,
    `of the period). meshctl and`,
    `the control plane are the esbuild bundles (${set.built}). Load average (1/5/15 min) when each N started: ${set.loads.join('; ')}.`,
    `${set.rounds.fanout} rounds of the all-nodes change (one File's content), ${set.rounds.solo} of the one-node change (a second`,
    'Module assigned to node-00000 only); the herd is timed from the SIGKILL (the Nodes followed by a watch). A node has',
    "applied a change when the control plane answered its agent's status write reporting it (timed in the agent's",
    'process, `bench/lib/sim-agent.ts` RoundMark); a round ends when every Assignment is Applied (an admin watch of the',
    'Assignments).',
    set.cpFromSource
      ? '**The control plane ran from source through tsx (SCALE_CP_FROM_SOURCE=1), not as shipped**, with the V8 flags of'
      : 'The control plane runs as `node dist/mesh-control-plane.js` (spawnControlPlane), with the V8 flags of',
    `its shipped bundle's shebang (\`${CONTROL_PLANE_NODE_FLAGS.join(' ')}\`).`,
    '**This machine was shared with other work during the run: the figures are upper bounds.**',
    '',
    ...table(rows),
    '',
    ...rows.flatMap((r) => r.problems.map((p) => `- N = ${r.n}: **did not complete**: ${p}`)),
    ...failed.map((f) => `- **FAIL**: ${f}`),
    '',
    ...targets(rows),
    '',
    "The control plane's memory by phase (maxima of 1 s samples: RSS from smaps_rollup, the rest from its `/metrics`;",
    'the CPU seconds it used during the phase), MiB:',
    '',
    ...rows.flatMap((r) => memoryLines(r.memory).map((l) => `- N = ${r.n}, ${l}`)),
  ].join('\n');
}
