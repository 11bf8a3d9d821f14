/**
 * Benchmark 8: the restore drill of issue 11 (test/e2e/restore-drill.ts, the same code its e2e test runs): the
 * real `mesh-control-plane` and three real `mesh-agent` processes, a backup pulled off the node, the control
 * plane SIGKILLed and its data directory deleted, `mesh-control-plane restore FILE` onto a new data directory
 * and port, `mesh-agent set-server` on every node. Measured: from the restore command to the restored control
 * plane serving, and to every agent reporting its (re-issued) declaration applied. Target: under 10 s.
 * Run alone: `node --import tsx bench/restore-drill.ts` prints the markdown section.
 */
import { createMesh } from '../test/e2e/mesh-helpers.ts';
import { runRestoreDrill } from '../test/e2e/restore-drill.ts';
import { isMain } from './lib/child.ts';

const RUNS = 3;
const TARGET_MS = 10_000;

/** One drill in its own temp mesh, torn down afterwards; its two figures in ms. */
async function oneDrill(): Promise<{ servingMs: number; reportingMs: number; pidsKept: boolean }> {
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const mesh = createMesh({ after: (fn) => void cleanups.push(fn) });
    const d = await runRestoreDrill(mesh);
    const pidsKept = Object.entries(d.pids.before).every(([n, pid]) => d.pids.after[n] === pid);
    return { servingMs: d.servingMs, reportingMs: d.reportingMs, pidsKept };
  } finally {
    for (const fn of cleanups.reverse()) await fn();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Runs the drill RUNS times and renders the section. */
export async function restoreDrillSection(): Promise<string> {
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await oneDrill());
  const reporting = runs.map((r) => r.reportingMs);
  const worst = Math.max(...reporting);
  const ms = (x: number): string => `${(x / 1000).toFixed(2)} s`;
  return [
    '## 8. Restore drill: from `mesh-control-plane restore` to every agent reporting (issue 11)',
    '',
    `${RUNS} drills, each in a fresh mesh of the real control plane and 3 real agents (through tsx, as the e2e tests run them):`,
    'a backup pulled off the node, more changes, SIGKILL of the control plane and removal of its data directory, then',
    '`mesh-control-plane restore FILE --data-dir NEW --node new-box --admin-config …` on a new port and `mesh-agent set-server URL`',
    'on the three nodes (in parallel). "Reporting": every node\'s re-issued Declaration acknowledged and Applied=True.',
    '',
    '| run | restore → serving | restore → every agent reporting | service pids kept |',
    '| --- | --- | --- | --- |',
    ...runs.map((r, i) => `| ${i + 1} | ${ms(r.servingMs)} | ${ms(r.reportingMs)} | ${r.pidsKept ? 'yes' : 'NO'} |`),
    '',
    `- every agent reporting, median ${ms(median(reporting))}, worst ${ms(worst)} ≤ ${ms(TARGET_MS)} — **${worst <= TARGET_MS && runs.every((r) => r.pidsKept) ? 'PASS' : 'FAIL'}**`,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  process.stdout.write((await restoreDrillSection()) + '\n');
}
