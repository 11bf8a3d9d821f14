/**
 * Benchmark 3: CLI start-up. Wall time of `node dist/meshctl.js --config <meshconfig> get nodes` against a
 * running control plane holding 10 Nodes, versus `kubectl version --client`, run alternately N times each; and
 * (issue 14) `meshctl get nodes <one>` — over the control plane's local Unix socket (meshctl on its machine; also
 * without the launcher's code cache) and over HTTPS (the socket extension absent: meshctl elsewhere) — beside `kubectl get nodes <one>` against the same server
 * and bare `node -e 0`, with `meshctl --help` (start-up and bundle load, no network), Node loading `node:tls`, and the
 * least any Node program can do for the same answer (one hand-written GET over `node:tls`, and over the socket with
 * `node:net`) to show where the time goes. When NODE_EXTRA_CA_CERTS is set, `node -e 0` and the socket row are also
 * run with it empty (Node parses that file at every start). Each command's CPU time (user + system, from bash's
 * `times`) is reported beside its wall time: on a shared machine it moves less than wall time does.
 * Run alone: `node --import tsx bench/cli-startup.ts` prints the markdown section.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '../api/client/http-client.ts';
import { REPO_ROOT, spawnControlPlane } from '../test/harness.ts';
import { isMain } from './lib/child.ts';
import { contenders, extraCa, type Contender } from './lib/cli-startup-commands.ts';
import { renderCliStartup, type RowId } from './lib/cli-startup-render.ts';
import { makeNodeObject } from './lib/node-object.ts';
import { summarize } from './lib/stats.ts';

const RUNS = 40;
const WARMUP = 2;
const NODES = 10;
const MESHCTL = join(REPO_ROOT, 'dist', 'meshctl.js');

/** Runs a command once and checks that it did what it should (the timed runs discard output). */
function checkOnce(c: Contender): void {
  const r = spawnSync(c.argv[0], c.argv.slice(1), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...c.env },
  });
  if (r.status !== 0 || !c.check(r.stdout))
    throw new Error(`${c.argv.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
}

const quote = (a: string): string => `'${a.replace(/'/g, `'\\''`)}'`;
const envPrefix = (c: Contender): string =>
  Object.entries(c.env ?? {})
    .map(([k, v]) => `${k}=${quote(v)} `)
    .join('');

/** Wall and CPU samples (ms) of one contender. */
interface Samples {
  wall: number[];
  cpu: number[];
}

/** Seconds from bash's `times` notation (`1m2.345s`). */
const seconds = (t: string): number => {
  const m = /^(\d+)m([\d.]+)s$/.exec(t);
  return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
};

/**
 * Times every contender once per round, alternating, after warm-up rounds, from one bash process that reads
 * its microsecond clock ($EPOCHREALTIME) around each command (no fork to read the clock, a small launcher, like
 * hyperfine), and its children's CPU time (`times`, a builtin) after it. A failed run aborts.
 */
function alternate(contenders: Contender[]): Samples[] {
  contenders.forEach(checkOnce);
  const body = contenders.map(
    (c, i) =>
      `s=$EPOCHREALTIME; ${envPrefix(c)}${c.argv.map(quote).join(' ')} >/dev/null 2>&1 || exit 3; e=$EPOCHREALTIME; echo "$r ${i} $s $e"; times`,
  );
  const script = `for r in $(seq 1 ${WARMUP + RUNS}); do\n${body.join('\n')}\ndone\n`;
  const out = spawnSync('bash', ['-c', script], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (out.status !== 0) throw new Error(`timing loop failed (${out.status}): ${out.stderr}`);
  const samples = contenders.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
  const lines = out.stdout.trim().split('\n');
  let childCpu = NaN;
  for (let k = 0; k + 2 < lines.length; k += 3) {
    const [round, i, s, e] = lines[k].split(' ');
    const [user, sys] = lines[k + 2].split(' ').map(seconds);
    const cpu = (user + sys - childCpu) * 1000;
    childCpu = user + sys;
    if (Number(round) <= WARMUP) continue;
    samples[Number(i)].wall.push((Number(e) - Number(s)) * 1000);
    samples[Number(i)].cpu.push(cpu);
  }
  return samples;
}

/** Builds dist/ with the project's own build script (so that the CLI measured is the current source). */
function build(): string {
  const r = spawnSync(process.execPath, ['hack/build.mjs'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.status === 0) return 'built just before the run with `node hack/build.mjs`';
  if (existsSync(MESHCTL))
    return `**the build failed** (${r.stderr.trim().split('\n')[0]}), so the dist/meshctl.js already there was measured`;
  throw new Error(`node hack/build.mjs failed: ${r.stderr}`);
}

/** Starts the control plane with 10 Nodes, times every command, stops it, renders the section. */
export async function cliStartupSection(): Promise<string> {
  const built = build();
  const cp = await spawnControlPlane();
  try {
    if (!cp.config.socketPath) throw new Error('the control plane serves no local socket:\n' + cp.output());
    const client = createClient(cp.config);
    for (let i = 0; i < NODES; i++) await client.create('nodes', makeNodeObject(i));
    client.close();
    const names = Array.from({ length: NODES }, (_, i) => makeNodeObject(i).metadata.name!);
    const list = contenders(cp, names, MESHCTL);
    const raw = alternate(list);
    const at = (id: RowId): Samples => raw[list.findIndex((c) => c.id === id)];
    // Issue 14's ratio per round (the two ran one after the other), whose median load swings move less.
    const paired = summarize(at('oneSocketInstalled').wall.map((w, i) => w / at('node').wall[i])).p50;
    const rows = list.map((c, i) => ({
      id: c.id,
      label: c.label,
      wall: summarize(raw[i].wall),
      cpu: summarize(raw[i].cpu),
    }));
    const ca = extraCa();
    return renderCliStartup({
      rows,
      paired,
      runs: RUNS,
      warmup: WARMUP,
      nodes: NODES,
      built,
      url: cp.url,
      socket: cp.config.socketPath,
      ...(ca ? { extraCa: ca } : {}),
    });
  } finally {
    await cp.stop();
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write((await cliStartupSection()) + '\n');
}
