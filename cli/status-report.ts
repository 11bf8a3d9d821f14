/**
 * What `meshctl status` prints, as a pure function of what it read (status.ts gathers it): the control
 * plane's reachability, each node's reachability and last contact, the certificates closest to expiry,
 * the recovery deadline and outage budget, the last verified backup's age, and ADR 0053's table of what is
 * stopped right now (DESIGN.md "What stops while the control plane is down") — and, for `--check`, the
 * problems that make it fail.
 */
import { humanDuration } from '../api/meta/human-duration.ts';
import type { Certificate, Mesh, Node } from '../api/v1alpha1/generated/index.ts';
import { clockReport, type ClockFacts } from '../api/wire/node-clock.ts';
import { findCondition } from '../api/meta/conditions.ts';
import { recoveryDeadlineOf } from '../api/v1alpha1/recovery-deadline.ts';
import { whatStops, type WhatStopsRow } from '../api/v1alpha1/what-stops.ts';

/** What status.ts read. `error` is set when the control plane could not be reached. */
export interface StatusInput {
  server: string;
  now: number;
  error?: string;
  mesh?: Mesh;
  nodes: Node[];
  certificates: Certificate[];
  /** A local agent's clock.json (`--agent-state-dir`): says since when the control plane is unreachable. */
  local?: ClockFacts;
  minBudgetMs: number;
  maxBackupAgeMs: number;
}

/** The text, and the reasons `--check` fails (empty when it passes). */
export interface StatusOutput {
  text: string;
  problems: string[];
}

const ago = (now: number, iso: string | undefined): string =>
  iso ? `${iso} (${humanDuration(now - Date.parse(iso))} ago)` : 'never';

function controlPlaneLines(input: StatusInput): string[] {
  if (!input.error) return [`Control plane:   reachable at ${input.server}`];
  const lines = [`Control plane:   UNREACHABLE at ${input.server} (${input.error})`];
  if (input.local) {
    const r = clockReport(input.local, input.now);
    lines.push(
      `                 node ${r.node} has not reached it for ${Math.round(r.unreachableSeconds)}s` +
        ` (since ${r.unreachableSince ?? '?'}; last contact ${ago(input.now, r.lastContact)})`,
    );
    if (r.deadline)
      lines.push(
        `                 that node's deadline: ${r.deadline} (${(r.budgetSeconds ?? 0) > 0 ? `in ${humanDuration((r.budgetSeconds ?? 0) * 1000)}` : 'PASSED'}, ${r.setBy})`,
      );
  } else lines.push('                 since when: run `mesh-agent status` on a node, or pass --agent-state-dir');
  return lines;
}

function nodeLines(input: StatusInput): string[] {
  const lines = ['', 'NODE'.padEnd(20) + 'REACHABLE'.padEnd(11) + 'LAST CONTACT'];
  for (const n of input.nodes) {
    const reachable = n.status?.reachable === undefined ? 'Unknown' : n.status.reachable ? 'True' : 'False';
    const last = n.status?.lastSeen ?? n.status?.controlPlaneLastContact;
    lines.push((n.metadata.name ?? '').padEnd(20) + reachable.padEnd(11) + ago(input.now, last));
  }
  return lines;
}

function certificateLines(input: StatusInput): string[] {
  const certs = [...input.certificates]
    .sort((a, b) => Date.parse(a.status?.notAfter ?? '9999') - Date.parse(b.status?.notAfter ?? '9999'))
    .slice(0, 5);
  const lines = ['', 'CERTIFICATE'.padEnd(20) + 'NODE'.padEnd(16) + 'READY'.padEnd(8) + 'NOT AFTER'];
  for (const c of certs) {
    const na = c.status?.notAfter;
    const left = na ? Date.parse(na) - input.now : undefined;
    const when = na ? `${na} (${left! <= 0 ? 'EXPIRED' : `in ${humanDuration(left!)}`})` : 'not issued';
    const ready = findCondition(c.status?.conditions, 'Ready')?.status ?? 'Unknown';
    lines.push((c.metadata.name ?? '').padEnd(20) + c.spec.node.padEnd(16) + ready.padEnd(8) + when);
  }
  if (certs.length === 0) lines.push('(none)');
  return lines;
}

/** ADR 0053's table (api/v1alpha1/what-stops.ts), each row "STOPPED (why)" or "working" right now. */
export function stoppedTable(input: StatusInput): string[] {
  const rows = whatStops({
    controlPlaneDown: input.error !== undefined,
    ...(input.local?.unreachableSince ? { downSince: input.local.unreachableSince } : {}),
    ...(input.mesh ? { mesh: input.mesh } : {}),
    nodes: input.nodes,
  });
  const state = (r: WhatStopsRow): string =>
    r.stopped ? `STOPPED (${r.why}${r.since ? ` since ${r.since}` : ''})` : 'working';
  return ['', 'What is stopped right now (ADR 0053):', ...rows.map((r) => `  ${r.what.padEnd(52)}${state(r)}`)];
}

/** The whole report and the `--check` problems. */
export function statusReport(input: StatusInput): StatusOutput {
  const problems: string[] = [];
  if (input.error) problems.push(`the control plane at ${input.server} is unreachable`);
  const lines = controlPlaneLines(input);
  const { deadline, setBy } = recoveryDeadlineOf(input.mesh, input.certificates);
  if (deadline) {
    const budget = Date.parse(deadline) - input.now;
    const shown = budget <= 0 ? `PASSED ${humanDuration(-budget)} ago` : humanDuration(budget);
    lines.push(`Recovery deadline: ${deadline} (set by ${setBy})`, `Outage budget:   ${shown}`);
    if (budget < input.minBudgetMs)
      problems.push(`the outage budget ${shown} is under the minimum ${humanDuration(input.minBudgetMs)}`);
  } else lines.push(`Recovery deadline: none (${setBy})`);
  const backup = input.mesh?.status?.lastVerifiedBackup;
  lines.push(`Last verified backup: ${backup ? `${backup.name}, taken ${ago(input.now, backup.time)}` : 'none'}`);
  if (!input.error) {
    if (!backup) problems.push('there is no verified backup');
    else if (input.now - Date.parse(backup.time) > input.maxBackupAgeMs)
      problems.push(`the last verified backup is older than ${humanDuration(input.maxBackupAgeMs)}`);
  }
  if (!input.error) lines.push(...nodeLines(input), ...certificateLines(input));
  lines.push(...stoppedTable(input));
  return { text: lines.join('\n') + '\n', problems };
}
