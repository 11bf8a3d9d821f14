/**
 * The markdown section of the 50-agent benchmark (bench/agents-fanout.ts): what was measured, the table,
 * the verdicts against issue 3's targets and the resources used.
 */
import type { FanoutResult, FanoutRound } from '../agents-fanout.ts';
import { mib } from './proc.ts';
import { ms, summarize, verdict, type LatencySummary } from './stats.ts';

const P50_TARGET_MS = 500;
const P99_TARGET_MS = 1000;

const maxOf = (xs: number[]): number => Math.max(...xs);
const minOf = (xs: number[]): number => Math.min(...xs);

function row(label: string, s: LatencySummary, bold = false): string {
  const p50 = bold ? `**${ms(s.p50)}**` : ms(s.p50);
  const p99 = bold ? `**${ms(s.p99)}**` : ms(s.p99);
  return `| ${label} | ${p50} | ${p99} | ${ms(s.max)} |`;
}

/** The table rows: per round (the slowest / fastest node) and per node (every node of every round). */
function rows(rounds: FanoutRound[], agents: number): { lines: string[]; all: LatencySummary } {
  const per = (f: (r: FanoutRound) => number): LatencySummary => summarize(rounds.map(f));
  const flat = (f: (r: FanoutRound) => number[]): LatencySummary => summarize(rounds.flatMap(f));
  const all = per((r) => maxOf(r.applied));
  const n = rounds.length;
  return {
    all,
    lines: [
      '| time from just before the Module update to … (ms) | p50 | p99 | max |',
      '|---|---|---|---|',
      row(
        `**every one** of the ${agents} nodes has reported the new generation applied (the last node; ${n} rounds)`,
        all,
        true,
      ),
      row(
        `the first node has reported it applied (${n} rounds)`,
        per((r) => minOf(r.applied)),
      ),
      row(
        `a node has reported it applied (each node of each round: ${n * agents} samples)`,
        flat((r) => r.applied),
      ),
      row(
        'the Module update is acknowledged (durable)',
        per((r) => r.ack),
      ),
      row(
        `the controller has re-rendered all ${agents} Declarations (the last one written)`,
        per((r) => maxOf(r.written)),
      ),
      row(
        `a node's Declaration is re-rendered (${n * agents} samples)`,
        flat((r) => r.written),
      ),
      row(
        `(the agent's part) from a node's new Declaration to its applied report (${n * agents} samples)`,
        flat((r) => r.agentPart),
      ),
      row(
        `all ${agents} Assignments show Applied=True at the new version (the controller's verdict, as \`meshctl get assignments\` shows it)`,
        per((r) => maxOf(r.assigned)),
      ),
    ],
  };
}

/** Renders the section. */
export function renderAgentsFanout(res: FanoutResult): string {
  const s = res.settings;
  const { lines, all } = rows(res.rounds, s.agents);
  return [
    `## 4. One change to ${s.agents} agents: time until every node reports it applied`,
    '',
    'The real `mesh-control-plane` (`spawnControlPlane()` from test/harness.ts: its own process, run through tsx, **HTTPS** with its',
    `own CA at \`${res.url}\`, with its Declaration controller) and ${s.agents} agents in this one process (\`createAgent\` from`,
    'agent/agent.ts: each with its own durable store, state dir and root in a temp dir, its own HTTPS client, watch and',
    `process supervisor; \`metricsListen: false\`, silent logger; the default intervals: reconcile every ${s.reconcileMs / 1000} s, heartbeat every`,
    `${s.heartbeatMs / 1000} s). One Module (a Directory and a ~0.5 KiB File, no Service: ${s.agents} supervised processes would measure the`,
    `machine's process start-up, not the propagation) is assigned to all ${s.agents} nodes by ${s.agents} Assignments. Set-up (Module,`,
    `Assignments, ${s.agents} agent starts, every node applying version 1.0.0) took ${(res.setupMs / 1000).toFixed(1)} s.`,
    '',
    `Then, ${s.rounds} times after ${s.warmup} warm-up rounds and a ${s.pauseMs} ms pause each: one \`update\` of the Module (a new`,
    "version and new file content). Each of the 50 Declarations is then re-rendered by the controller, received on its agent's",
    'watch, stored (fsync), acknowledged, applied (the File replaced atomically), and reported. Times come from two admin watches',
    '(Declarations and Assignments) in this process: a node counts as applied at the first event whose File content is the',
    'new one and whose `status.appliedGeneration` equals its `spec.generation`. With 20 rounds the p99 of a per-round figure is',
    'its maximum (nearest rank).',
    '',
    ...lines,
    '',
    `Targets (issue 3), the time until every one of the ${s.agents} nodes has reported the change applied:`,
    '',
    `- all ${s.agents} nodes applied one change, p50 ≤ ${P50_TARGET_MS} ms: ${ms(all.p50)} ms — ${verdict(all.p50 <= P50_TARGET_MS)}`,
    `- all ${s.agents} nodes applied one change, p99 ≤ ${P99_TARGET_MS} ms: ${ms(all.p99)} ms — ${verdict(all.p99 <= P99_TARGET_MS)}`,
    '',
    'Resources (informative):',
    '',
    `- CPU per change (from the first measured round to a pause after the last, divided by ${s.rounds}; background heartbeats and`,
    `  periodic reconciles included): control plane ${res.cpu.controlPlane.toFixed(3)} CPU-s; this process (${s.agents} agents and the two watches) ${res.cpu.agents.toFixed(3)} CPU-s.`,
    `- Control plane memory after the rounds: VmRSS **${mib(res.controlPlaneMemory.rssMiB)} MiB**, peak (VmHWM) ${mib(res.controlPlaneMemory.hwmMiB)} MiB —`,
    '  run through tsx, whose loader and compiled-module cache add to it; `dist/mesh-control-plane.js` would use less.',
    `- This process (${s.agents} in-process agents, tsx): VmRSS ${mib(res.agentsMemory.rssMiB)} MiB, peak ${mib(res.agentsMemory.hwmMiB)} MiB, i.e. at most`,
    `  ${mib(res.agentsMemory.rssMiB / s.agents)} MiB per agent (a separate agent process is measured in §6).`,
  ].join('\n');
}
