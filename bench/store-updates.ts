/**
 * Benchmark 1: durable updates at 10,000 stored objects (~1 KiB each) with 64 concurrent writers,
 * our store side by side with lowdb's stock JSONFile and better-sqlite3 (WAL, synchronous=FULL), on the same disk.
 * Each contender runs in a fresh child process (`--contender NAME --dir DIR`) so that none inherits another's heap.
 * Run alone: `node --import tsx bench/store-updates.ts` prints the markdown section.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isMain, runTsChild } from './lib/child.ts';
import { runLoad, type LoadResult } from './lib/load.ts';
import { makeNodeObject, objectName } from './lib/node-object.ts';
import { dfLine, sameFilesystem } from './lib/machine.ts';
import { ms, rate, verdict } from './lib/stats.ts';
import { CONTENDERS, type ContenderName } from './contenders/registry.ts';

const OBJECTS = 10_000;
const WRITERS = 64;
const WARMUP_MS = 1_000;
const PROJECT_DIR = join(import.meta.dirname, '..');

interface ChildResult {
  name: ContenderName;
  seedMs: number;
  load: LoadResult;
  stats?: string;
}

/** Child mode: seeds one contender in a fresh directory under `parent` and measures it. */
async function measureOne(name: ContenderName, parent: string): Promise<ChildResult> {
  const spec = CONTENDERS[name];
  const dir = mkdtempSync(join(parent, `${name}-`));
  try {
    const c = await spec.open(dir);
    const t0 = performance.now();
    await c.seed(Array.from({ length: OBJECTS }, (_, i) => makeNodeObject(i)));
    const seedMs = performance.now() - t0;
    globalThis.gc?.();
    const load = await runLoad({
      writers: WRITERS,
      warmupMs: WARMUP_MS,
      durationMs: spec.durationMs,
      op: () => c.update(objectName(Math.floor(Math.random() * OBJECTS))),
    });
    const stats = c.stats?.();
    await c.close();
    return { name, seedMs, load, ...(stats ? { stats } : {}) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs every contender, one child process each, and renders the markdown section. */
export async function storeUpdatesSection(): Promise<string> {
  const parent = mkdtempSync(join(tmpdir(), 'meshctl-bench-store-'));
  const results: (ChildResult | { name: ContenderName; error: string })[] = [];
  try {
    for (const name of Object.keys(CONTENDERS) as ContenderName[]) {
      process.stderr.write(`store-updates: ${name}...\n`);
      try {
        const out = await runTsChild(join(import.meta.dirname, 'store-updates.ts'), [
          '--contender',
          name,
          '--dir',
          parent,
        ]);
        results.push(JSON.parse(out.trim().split('\n').pop()!) as ChildResult);
      } catch (e) {
        results.push({ name, error: (e as Error).message });
      }
    }
    return render(results, parent);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
}

function render(results: (ChildResult | { name: ContenderName; error: string })[], dir: string): string {
  const rows = results.map((r) => {
    const s = CONTENDERS[r.name];
    if ('error' in r) return `| ${s.label} | ${s.durable} | — | failed: ${r.error} | | | | | |`;
    const l = r.load;
    return `| ${s.label} | ${s.durable} | ${(l.durationMs / 1000).toFixed(1)} s | **${rate(l.perSecond)}** | ${ms(l.latency.p50)} | ${ms(l.latency.p99)} | ${ms(l.latency.max)} | ${ms(l.maxStallMs)} | ${l.errors} |`;
  });
  return [
    '## 1. Durable store updates: 10,000 objects, 64 concurrent writers',
    '',
    `${OBJECTS.toLocaleString('en-US')} valid \`Node\` objects of ~1.2 KiB JSON each (spec: site and endpoint; the bulk in 12 annotations). ${WRITERS} writers, each`,
    'doing read-modify-write updates of random objects one after another (read, bump a label, write back), for a fixed window after',
    `${WARMUP_MS / 1000} s of warm-up. Latency is from issuing an update to its acknowledgement; "max loop stall" is the worst`,
    'event-loop delay seen by `perf_hooks.monitorEventLoopDelay` (1 ms resolution) during the window. Every contender runs',
    'in its own fresh Node process, one after another, in directories under',
    `\`${dir}\` — \`${dfLine(dir)}\` — the same filesystem as the project folder: ${sameFilesystem(dir, PROJECT_DIR) ? 'yes' : 'NO'}.`,
    '',
    '| contender | durable (fsync before ack)? | window | updates/s | p50 ms | p99 ms | max ms | max loop stall ms | errors (retried) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...targets(results),
    '',
    ...Object.values(CONTENDERS).map((s) => `- *${s.label}*: ${s.notes}`),
    ...seedLines(results),
  ].join('\n');
}

function targets(results: (ChildResult | { name: ContenderName; error: string })[]): string[] {
  const get = (n: ContenderName): LoadResult | undefined => {
    const r = results.find((x) => x.name === n);
    return r && 'load' in r ? r.load : undefined;
  };
  const ours = get('our-store');
  const sqlite = get('sqlite-full');
  const batched = get('sqlite-full-batched');
  if (!ours) return ['Targets: our store did not run, so every target is **FAIL**.'];
  const lines = [
    'Targets (issue 2), for our store:',
    '',
    `- updates/s ≥ SQLite FULL (one transaction per update): ${rate(ours.perSecond)} vs ${sqlite ? rate(sqlite.perSecond) : 'n/a'} — ${verdict(!!sqlite && ours.perSecond >= sqlite.perSecond)}`,
    `- p99 ≤ 10 ms: ${ms(ours.latency.p99)} ms — ${verdict(ours.latency.p99 <= 10)}`,
    `- no event-loop stall > 50 ms: max ${ms(ours.maxStallMs)} ms — ${verdict(ours.maxStallMs <= 50)}`,
  ];
  if (batched)
    lines.push(
      `- (informative, not a target) vs SQLite FULL with hand-made group commit: ${rate(ours.perSecond)} vs ${rate(batched.perSecond)} updates/s`,
    );
  return lines;
}

function seedLines(results: (ChildResult | { name: ContenderName; error: string })[]): string[] {
  const done = results.filter((r): r is ChildResult => 'seedMs' in r);
  const stats = done.filter((r) => r.stats).map((r) => `- ${CONTENDERS[r.name].label}: ${r.stats}.`);
  return [
    '',
    ...(stats.length ? ['Store counters:', '', ...stats, ''] : []),
    `Seeding ${OBJECTS.toLocaleString('en-US')} objects (not measured above): ${done.map((r) => `${CONTENDERS[r.name].label} ${(r.seedMs / 1000).toFixed(1)} s`).join('; ')}.`,
  ];
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { contender: { type: 'string' }, dir: { type: 'string' } } });
  if (values.contender) {
    const r = await measureOne(values.contender as ContenderName, values.dir ?? tmpdir());
    process.stdout.write(JSON.stringify(r) + '\n');
  } else {
    process.stdout.write((await storeUpdatesSection()) + '\n');
  }
}
