/**
 * `mesh-agent reconcile --state-dir DIR`: asks the agent running with that state directory to reconcile now.
 * It finds the agent by `DIR/agent.json` (agent-info.ts), checks that the pid is still that process (its
 * start time, as the supervisor checks its services), sends it SIGHUP — which makes the agent forget the
 * backoff of every failed resource and reconcile at once — then waits for that reconcile on the agent's
 * /healthz and prints how it went.
 * Exit codes: 0 the reconcile applied everything, 1 no running agent or it did not apply everything, 2 bad usage.
 */
import { parseArgs, refusePositionals, unknownOption, type FlagSpec } from '../api/meta/flags.ts';
import { EXIT_USAGE, UsageError } from '../api/meta/usage-error.ts';
import { readAgentInfo, type AgentInfoFile } from './agent-info.ts';
import type { AgentState } from './agent.ts';
import { isSameProcess } from './drivers/process-record.ts';

/** The help text of `mesh-agent reconcile`. */
export const RECONCILE_USAGE = `Usage: mesh-agent reconcile --state-dir DIR

Asks the agent running with state directory DIR (its pid is in DIR/agent.json) to reconcile now: sends it
SIGHUP, so it retries every failed resource at once instead of waiting out its backoff (at most 30s), then
waits for that reconcile and prints how it went.
Exit codes: 0 everything applied, 1 no running agent or not everything applied, 2 bad usage.

Flags:
  --state-dir DIR   the state directory of the running agent (required)
  -h, --help        show this help
`;

const FLAGS: FlagSpec[] = [
  { name: 'state-dir', type: 'string' },
  { name: 'help', short: 'h', type: 'boolean' },
];

/** How long to wait for the agent to report the reconcile the signal asked for. */
const REPORT_TIMEOUT_MS = 60_000;

/** Runs `mesh-agent reconcile …` (the words after `reconcile`); resolves with the exit code. */
export async function reconcileCommand(argv: string[]): Promise<number> {
  let stateDir: string;
  try {
    const args = parseArgs(argv, FLAGS, { unknownFlag: unknownOption });
    if (args.bool('help')) {
      process.stdout.write(RECONCILE_USAGE);
      return 0;
    }
    refusePositionals(args);
    const dir = args.str('state-dir');
    if (!dir) throw new UsageError('--state-dir is required');
    stateDir = dir;
  } catch (e) {
    process.stderr.write(`mesh-agent reconcile: ${(e as Error).message}\n\n${RECONCILE_USAGE}`);
    return EXIT_USAGE;
  }
  const found = await runningAgent(stateDir);
  if (typeof found === 'string') {
    process.stderr.write(`mesh-agent reconcile: ${found}\n`);
    return 1;
  }
  const signalledAt = Date.now();
  process.kill(found.pid, 'SIGHUP');
  process.stdout.write(
    `Sent SIGHUP to the agent of node "${found.node}" (pid ${found.pid}): every failed resource is retried now\n`,
  );
  return reportReconcile(found, signalledAt);
}

/** The agent recorded in the state directory, when that process still runs; else why not. */
async function runningAgent(stateDir: string): Promise<AgentInfoFile | string> {
  let info: AgentInfoFile;
  try {
    info = await readAgentInfo(stateDir);
  } catch (e) {
    return `no agent has started with state directory ${stateDir} (cannot read its agent.json: ${(e as Error).message})`;
  }
  if (info.startTime === undefined || !isSameProcess(info.pid, info.startTime, info.bootId))
    return `the agent of ${stateDir} is not running (pid ${info.pid}, recorded in its agent.json, is not that process)`;
  return info;
}

/** Waits for a reconcile that started after the signal on the agent's /healthz and prints its outcome. */
async function reportReconcile(info: AgentInfoFile, signalledAt: number): Promise<number> {
  if (!info.metrics) return 0;
  const state = await reconcileAfter(info.metrics, signalledAt);
  if (typeof state === 'string') {
    process.stderr.write(`mesh-agent reconcile: the agent did not report the reconcile: ${state}\n`);
    return 1;
  }
  const last = state.lastReconcile!;
  if (state.ok) {
    process.stdout.write(`Reconciled: all ${last.resources ?? 0} resources applied\n`);
    return 0;
  }
  process.stdout.write(`Reconciled: ${state.reason ?? 'not everything applied'}\n`);
  return 1;
}

/** Polls /healthz until it shows a reconcile that started at `since` or later; else why not (after the timeout). */
async function reconcileAfter(metrics: string, since: number): Promise<AgentState | string> {
  const deadline = Date.now() + REPORT_TIMEOUT_MS;
  let why = 'no reconcile since the signal';
  while (Date.now() < deadline) {
    try {
      const h = (await (await fetch(`${metrics}/healthz`)).json()) as AgentState;
      // startedAt is derived from whole milliseconds on both sides: allow 1 ms.
      if (Date.parse(h.lastReconcile?.startedAt ?? '') >= since - 1) return h;
    } catch (e) {
      why = `${metrics}/healthz: ${(e as Error).message}`;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return `${why} within ${REPORT_TIMEOUT_MS / 1000}s`;
}
