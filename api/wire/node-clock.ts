/**
 * `<agent-state-dir>/clock.json`: the node's recovery clock (DESIGN.md "The recovery clock") from what the agent knows — no control
 * plane needed: when it last reached the control plane, since when it cannot, and the certificates it
 * holds. The agent writes these facts to `<state-dir>/clock.json` (atomically, on every change and
 * heartbeat) so that `mesh-agent status` can read them whether or not the agent runs; every figure that
 * depends on `now` (unreachable for, remaining, expired, budget) is computed by the reader.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../meta/atomic-file.ts';
import { recoveryClock } from '../meta/recovery-clock.ts';

/** What clock.json holds. */
export interface ClockFacts {
  node: string;
  /** When the agent last wrote the file. */
  updatedAt: string;
  /** Whether the last call reached the control plane (absent before the first call). */
  reachable?: boolean;
  lastContact?: string;
  unreachableSince?: string;
  /** The certificates whose material the agent holds. */
  certificates: Array<{ name: string; notAfter: string }>;
}

/** One certificate as of `now`. */
export interface HeldCertificate {
  name: string;
  notAfter: string;
  remainingSeconds: number;
  expired: boolean;
}

/** The clock as of `now`. */
export interface ClockReport {
  node: string;
  reachable?: boolean;
  lastContact?: string;
  unreachableSince?: string;
  /** Seconds since contact was lost (0 while reachable). */
  unreachableSeconds: number;
  /** Earliest first. */
  certificates: HeldCertificate[];
  /** The earliest notAfter of the certificates held: the control plane must be back before then. */
  deadline?: string;
  budgetSeconds?: number;
  setBy?: string;
}

/** The path of clock.json in a state directory. */
export function clockPath(stateDir: string): string {
  return join(stateDir, 'clock.json');
}

/** Writes clock.json. */
export async function writeClockFacts(stateDir: string, facts: ClockFacts): Promise<void> {
  await writeFileAtomic(clockPath(stateDir), JSON.stringify(facts, null, 2) + '\n', { mode: 0o644 });
}

/** Reads clock.json (throws when absent or not readable). */
export async function readClockFacts(stateDir: string): Promise<ClockFacts> {
  return JSON.parse(await readFile(clockPath(stateDir), 'utf8')) as ClockFacts;
}

/** The clock report of `facts` at `nowMs` (pure). */
export function clockReport(facts: ClockFacts, nowMs: number): ClockReport {
  const seconds = (iso: string): number => Math.round((Date.parse(iso) - nowMs) / 1000);
  const certificates = facts.certificates
    .map((c) => ({ ...c, remainingSeconds: seconds(c.notAfter), expired: Date.parse(c.notAfter) <= nowMs }))
    .sort((a, b) => Date.parse(a.notAfter) - Date.parse(b.notAfter));
  // The node's deadline is computed as the control plane computes Mesh.status's (api/meta/recovery-clock.ts).
  const clock = recoveryClock(
    facts.certificates.map((c) => ({
      kind: 'Certificate',
      name: c.name,
      node: facts.node,
      notAfter: Date.parse(c.notAfter),
    })),
    nowMs,
  );
  const first = clock.setBy && certificates.find((c) => c.name === clock.setBy!.name);
  const unreachable =
    facts.reachable === false && facts.unreachableSince !== undefined ? -seconds(facts.unreachableSince) : 0;
  return {
    node: facts.node,
    ...(facts.reachable !== undefined ? { reachable: facts.reachable } : {}),
    ...(facts.lastContact ? { lastContact: facts.lastContact } : {}),
    ...(facts.unreachableSince ? { unreachableSince: facts.unreachableSince } : {}),
    unreachableSeconds: Math.max(0, unreachable),
    certificates,
    ...(first && clock.budgetSeconds !== undefined
      ? { deadline: first.notAfter, budgetSeconds: clock.budgetSeconds, setBy: `certificate ${first.name}` }
      : {}),
  };
}
