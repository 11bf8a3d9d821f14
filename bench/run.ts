/**
 * The benchmark entry point (`npm run bench`): runs every benchmark of issues 2 (store, watch, CLI), 3 (agents), 9 (list storm),
 * 11 (restore drill) and 14 (scale: N simulated agents, bench/scale.ts)
 * in its own child process, one after another, and writes bench/RESULTS.md with the date, the machine and every figure.
 * The benchmarks are not tests: they measure, print markdown, and say PASS/FAIL against the issue's targets.
 * `npm run bench -- scale cli-startup` runs only the named benchmarks and replaces their sections in RESULTS.md
 * (bench/lib/merge-results.ts), keeping the others' figures.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runTsChild } from './lib/child.ts';
import { cpuSnapshot, machineLines, otherCpu } from './lib/machine.ts';
import { mergeSections } from './lib/merge-results.ts';

const BENCH_DIR = import.meta.dirname;
const SECTIONS = [
  'store-updates.ts',
  'watch-fanout.ts',
  'cli-startup.ts',
  'agents-fanout.ts',
  'agent-reconcile.ts',
  'agent-rss.ts',
  'list-storm.ts',
  'restore-drill.ts',
  'scale.ts',
];
const only = process.argv.slice(2).map((a) => (a.endsWith('.ts') ? a : `${a}.ts`));
const unknown = only.filter((f) => !SECTIONS.includes(f));
if (unknown.length > 0) throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${SECTIONS.join(', ')}`);

function load(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}

/** Runs one benchmark file; a crash becomes a FAIL section rather than losing the others' figures. */
async function section(file: string): Promise<{ text: string; ok: boolean }> {
  process.stderr.write(`bench: ${file}\n`);
  const before = cpuSnapshot();
  try {
    const text = (await runTsChild(join(BENCH_DIR, file))).trim();
    return { text: `${text}\n\nContention during this benchmark: ${otherCpu(before, cpuSnapshot())}.`, ok: true };
  } catch (e) {
    return { text: `## ${file}\n\n**FAIL**: the benchmark did not complete: ${(e as Error).message}`, ok: false };
  }
}

/** The targets' verdict lines, gathered from the sections (prefixed with the section's number) for the summary. */
function verdicts(sections: string[]): string[] {
  return sections.flatMap((s) => {
    const n = /^## (\d+)\./.exec(s)?.[1] ?? '?';
    return s
      .split('\n')
      .filter((l) => /\*\*(PASS|FAIL)\*\*/.test(l))
      .map((l) => `- §${n} ${l.replace(/^- /, '')}`);
  });
}

const started = new Date();
const t0 = performance.now();
const loadBefore = load();
const cpuBefore = cpuSnapshot();
const results = [];
for (const file of only.length > 0 ? only : SECTIONS) results.push(await section(file));
const cpuAfter = cpuSnapshot();
const texts = results.map((r) => r.text);
const doc = [
  '# Benchmarks (issues 2, 3, 9, 11 and 14)',
  '',
  `Measured by \`npm run bench\` (\`tsx bench/run.ts\`) on ${started.toISOString()}, all side by side in one run of`,
  `${((performance.now() - t0) / 1000).toFixed(0)} s. Each benchmark runs in its own Node process (and each store contender in its own).`,
  'Figures from one run on a shared 2-CPU virtual machine: they vary between runs, much more when other processes compete for the CPUs',
  '("contention" below and after each benchmark says how much they did).',
  '',
  '## Machine',
  '',
  ...machineLines(join(BENCH_DIR, '..')),
  `- load average (1/5/15 min) before: ${loadBefore}; after: ${load()}`,
  `- contention: ${otherCpu(cpuBefore, cpuAfter)}`,
  '',
  '## Targets',
  '',
  ...verdicts(texts),
  '',
  ...texts.flatMap((t) => [t, '']),
].join('\n');
const resultsFile = join(BENCH_DIR, 'RESULTS.md');
/** A partial run's merge: its sections in place of their namesakes, and the Targets list made again from all sections. */
function merged(previous: string): string {
  const doc = mergeSections(previous, texts, `load average before: ${loadBefore}; after: ${load()}`);
  const all = doc.split(/\n(?=## \d+\.)/).slice(1);
  return doc.replace(/^## Targets\n\n[^]*?\n\n(?=## )/m, `## Targets\n\n${verdicts(all).join('\n')}\n\n`);
}
const written = only.length > 0 ? merged(readFileSync(resultsFile, 'utf8')) : doc;
writeFileSync(resultsFile, written);
process.stdout.write(written);
process.stderr.write(`bench: wrote ${join(BENCH_DIR, 'RESULTS.md')}\n`);
if (!results.every((r) => r.ok)) process.exitCode = 1;
