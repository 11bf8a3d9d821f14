/**
 * `mesh-agent status --state-dir DIR [-o json]`: the node's recovery clock, read from the state directory
 * alone (clock.json, written by the agent: api/wire/node-clock.ts) — it needs neither the control plane nor a
 * running agent. It prints whether the control plane is reachable (and for how long it has not been), each
 * certificate the node holds with its notAfter and remaining time (EXPIRED once past), and the node's own
 * deadline — and where the running agent serves the node's own page (agent.json's metrics URL). Exit codes:
 * 0 printed, 1 no clock.json in DIR (the agent never ran there), 2 bad usage.
 */
import { humanDuration } from '../api/meta/human-duration.ts';
import { parseArgs, refusePositionals, unknownOption, type FlagSpec } from '../api/meta/flags.ts';
import { EXIT_USAGE, UsageError } from '../api/meta/usage-error.ts';
import { readAgentInfo } from './agent-info.ts';
import { clockPath, clockReport, readClockFacts, type ClockFacts, type ClockReport } from '../api/wire/node-clock.ts';

/** The help text of `mesh-agent status`. */
export const STATUS_USAGE = `Usage: mesh-agent status --state-dir DIR [-o json]

Prints the node's recovery clock from DIR/clock.json, which the agent keeps up to date: whether the
control plane is reachable (and for how long it has not been), each certificate the node holds with its
notAfter and remaining time, and the node's deadline (the earliest notAfter). Needs no control plane.
Also prints the URL of the node's own page, which the running agent serves on its metrics port.
Exit codes: 0 printed, 1 DIR holds no clock.json, 2 bad usage.

Flags:
  --state-dir DIR   the agent's state directory (required)
  -o, --output FMT  json: the report as JSON
  -h, --help        show this help
`;

const FLAGS: FlagSpec[] = [
  { name: 'state-dir', type: 'string' },
  { name: 'output', short: 'o', type: 'string' },
  { name: 'help', short: 'h', type: 'boolean' },
];

/** Runs `mesh-agent status …` (the words after `status`); resolves with the exit code. */
export async function statusCommand(argv: string[], now: () => number = Date.now): Promise<number> {
  let stateDir: string;
  let json: boolean;
  try {
    const args = parseArgs(argv, FLAGS, { unknownFlag: unknownOption });
    if (args.bool('help')) {
      process.stdout.write(STATUS_USAGE);
      return 0;
    }
    refusePositionals(args);
    const dir = args.str('state-dir');
    if (!dir) throw new UsageError('--state-dir is required');
    const out = args.str('output');
    if (out !== undefined && out !== 'json') throw new UsageError(`unsupported output format "${out}": use json`);
    stateDir = dir;
    json = out === 'json';
  } catch (e) {
    process.stderr.write(`mesh-agent status: ${(e as Error).message}\n\n${STATUS_USAGE}`);
    return EXIT_USAGE;
  }
  let facts: ClockFacts;
  try {
    facts = await readClockFacts(stateDir);
  } catch (e) {
    process.stderr.write(`mesh-agent status: cannot read ${clockPath(stateDir)}: ${(e as Error).message}\n`);
    return 1;
  }
  const at = now();
  const report = clockReport(facts, at);
  const page = await readAgentInfo(stateDir).then(
    (i) => (i.metrics ? `${i.metrics}/` : undefined),
    () => undefined,
  );
  process.stdout.write(
    json
      ? JSON.stringify({ ...report, updatedAt: facts.updatedAt, ...(page ? { page } : {}) }, null, 2) + '\n'
      : formatReport(report, facts, at, page),
  );
  return 0;
}

/** The human-readable report; `page` is the node page's URL from agent.json, when known. */
export function formatReport(r: ClockReport, facts: ClockFacts, nowMs: number, page?: string): string {
  const ago = (iso: string): string => `${humanDuration(nowMs - Date.parse(iso))} ago`;
  const lines = [`Node:           ${r.node}`];
  if (r.reachable === false) {
    lines.push(
      `Control plane:  unreachable for ${Math.round(r.unreachableSeconds)}s (${humanDuration(r.unreachableSeconds * 1000)}, since ${r.unreachableSince})`,
    );
  } else lines.push(`Control plane:  ${r.reachable === true ? 'reachable' : 'not contacted yet'}`);
  lines.push(`Last contact:   ${r.lastContact ? `${r.lastContact} (${ago(r.lastContact)})` : 'never'}`);
  lines.push(
    `Clock written:  ${facts.updatedAt} (${ago(facts.updatedAt)}; by the agent on every change and heartbeat)`,
  );
  if (r.deadline !== undefined) {
    const left = r.budgetSeconds ?? 0;
    const budget = left <= 0 ? `PASSED ${humanDuration(-left * 1000)} ago` : `in ${humanDuration(left * 1000)}`;
    lines.push(`Deadline:       ${r.deadline} (${budget}; set by ${r.setBy})`);
  } else lines.push('Deadline:       none (the node holds no certificate)');
  lines.push('', 'CERTIFICATE'.padEnd(24) + 'NOT AFTER'.padEnd(26) + 'REMAINING');
  for (const c of r.certificates) {
    const remaining = c.expired ? 'EXPIRED' : `${c.remainingSeconds}s (${humanDuration(c.remainingSeconds * 1000)})`;
    lines.push(c.name.padEnd(24) + c.notAfter.padEnd(26) + remaining);
  }
  if (r.certificates.length === 0) lines.push('(none)');
  if (page) lines.push('', `Node page:      ${page} (served by the agent while it runs)`);
  return lines.join('\n') + '\n';
}
