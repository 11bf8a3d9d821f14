/**
 * Benchmark 3: CLI start-up. Wall time of `node dist/meshctl.js --config <meshconfig> get nodes` against a
 * running control plane holding 10 Nodes, versus `kubectl version --client`, run alternately N times each; and
 * (issue 14) `meshctl get nodes <one>` beside `kubectl get nodes <one>` against the same server and bare `node -e 0`,
 * with `meshctl --help` (start-up and bundle load, no network) to show where the time goes.
 * Run alone: `node --import tsx bench/cli-startup.ts` prints the markdown section.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '../api/client/http-client.ts';
import { REPO_ROOT, spawnControlPlane } from '../test/harness.ts';
import { isMain } from './lib/child.ts';
import { makeNodeObject } from './lib/node-object.ts';
import { ms, summarize, verdict, type LatencySummary } from './lib/stats.ts';

const RUNS = 20;
const WARMUP = 2;
const NODES = 10;
const MESHCTL = join(REPO_ROOT, 'dist', 'meshctl.js');

/** A command line to time, and a check that its run did what it should. */
interface Contender {
  label: string;
  argv: string[];
  check: (stdout: string) => boolean;
}

/** Runs a command once and checks that it did what it should (the timed runs discard output). */
function checkOnce(c: Contender): void {
  const r = spawnSync(c.argv[0], c.argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0 || !c.check(r.stdout))
    throw new Error(`${c.argv.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
}

const quote = (a: string): string => `'${a.replace(/'/g, `'\\''`)}'`;

/**
 * Times every contender once per round, alternating, after warm-up rounds, from one bash process that reads
 * its microsecond clock ($EPOCHREALTIME) around each command (no fork to read the clock, a small launcher, like
 * hyperfine). A failed run aborts. Returns the samples (ms) per contender.
 */
function alternate(contenders: Contender[]): number[][] {
  contenders.forEach(checkOnce);
  const body = contenders.map(
    (c, i) =>
      `s=$EPOCHREALTIME; ${c.argv.map(quote).join(' ')} >/dev/null 2>&1 || exit 3; e=$EPOCHREALTIME; echo "$r ${i} $s $e"`,
  );
  const script = `for r in $(seq 1 ${WARMUP + RUNS}); do\n${body.join('\n')}\ndone\n`;
  const out = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`timing loop failed (${out.status}): ${out.stderr}`);
  const samples = contenders.map(() => [] as number[]);
  for (const line of out.stdout.trim().split('\n')) {
    const [round, i, s, e] = line.split(' ');
    if (Number(round) > WARMUP) samples[Number(i)].push((Number(e) - Number(s)) * 1000);
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

/** Starts the control plane with 10 Nodes, times both CLIs, stops it, renders the section. */
export async function cliStartupSection(): Promise<string> {
  const built = build();
  const cp = await spawnControlPlane();
  try {
    const client = createClient(cp.config);
    for (let i = 0; i < NODES; i++) await client.create('nodes', makeNodeObject(i));
    const names = Array.from({ length: NODES }, (_, i) => makeNodeObject(i).metadata.name!);
    const contenders: Contender[] = [
      {
        label: '`meshctl get nodes`',
        argv: [process.execPath, MESHCTL, '--config', cp.meshconfigPath, 'get', 'nodes'],
        check: (o) => names.every((n) => o.includes(n)),
      },
      {
        label: '`kubectl version --client`',
        argv: ['kubectl', 'version', '--client'],
        check: (o) => o.includes('Client Version'),
      },
      {
        label: '`node -e 0` (for reference: bare Node start-up)',
        argv: [process.execPath, '-e', '0'],
        check: () => true,
      },
      {
        label: '`meshctl --help` (for reference: start-up and bundle load, no network)',
        argv: [process.execPath, MESHCTL, '--help'],
        check: (o) => o.includes('Usage'),
      },
      {
        label: '`meshctl get nodes <one>`',
        argv: [process.execPath, MESHCTL, '--config', cp.meshconfigPath, 'get', 'nodes', names[0]],
        check: (o) => o.includes(names[0]),
      },
      {
        label: '`kubectl get nodes <one>` (same server)',
        argv: ['kubectl', '--kubeconfig', cp.meshconfigPath, 'get', 'nodes', names[0]],
        check: (o) => o.includes(names[0]),
      },
    ];
    const samples = alternate(contenders).map((s) => summarize(s));
    return render(contenders, samples, built, cp.url);
  } finally {
    await cp.stop();
  }
}

function kubectlVersion(): string {
  const r = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  return (r.stdout.split('\n')[0] ?? '').trim();
}

function hasHyperfine(): boolean {
  return spawnSync('sh', ['-c', 'command -v hyperfine'], { encoding: 'utf8' }).status === 0;
}

function render(contenders: Contender[], s: LatencySummary[], built: string, url: string): string {
  const ratio = s[0].mean / s[1].mean;
  const ratioP50 = s[0].p50 / s[1].p50;
  return [
    '## 3. CLI start-up: `meshctl get nodes` vs `kubectl version --client`',
    '',
    `\`node dist/meshctl.js --config <admin.meshconfig> get nodes\` (the esbuild bundle, ${built}) against the real`,
    `\`mesh-control-plane\` (spawnControlPlane, **HTTPS** with its own CA at \`${url}\`) holding ${NODES} Nodes: a full`,
    'start, TLS connection, list and table print. Versus `kubectl version --client` (no network at all) — ' +
      `\`${kubectlVersion()}\`,`,
    `\`${spawnSync('sh', ['-c', 'readlink -f "$(command -v kubectl)"'], { encoding: 'utf8' }).stdout.trim()}\`. Each command ran ${RUNS} times, alternating,`,
    `after ${WARMUP} warm-up rounds (output to /dev/null; each output was checked once before), wall time read from one bash loop's`,
    `\`$EPOCHREALTIME\` around each command${hasHyperfine() ? '' : ' (hyperfine is not installed)'}.`,
    '',
    '| command | mean ms | p50 ms | p99 ms | min … max ms |',
    '|---|---|---|---|---|',
    ...contenders.map(
      (c, i) =>
        `| ${c.label} | **${ms(s[i].mean)}** | ${ms(s[i].p50)} | ${ms(s[i].p99)} | ${ms(s[i].min)} … ${ms(s[i].max)} |`,
    ),
    '',
    `Ratio meshctl / kubectl: **${ratio.toFixed(2)}×** (mean), ${ratioP50.toFixed(2)}× (p50). Target (issue 2): ≤ 2× — ${verdict(ratio <= 2)}.`,
    '',
    ...oneNode(s),
  ].join('\n');
}

/** Issue 14: `meshctl get nodes <one>` against bare `node -e 0` (rows 2, 4), with kubectl's figure beside it (row 5). */
function oneNode(s: LatencySummary[]): string[] {
  const [node, help, one, kube] = [s[2], s[3], s[4], s[5]];
  const ratio = one.p50 / node.p50;
  return [
    `\`meshctl get nodes <one>\` / \`node -e 0\`: **${ratio.toFixed(2)}×** (p50; ${(one.mean / node.mean).toFixed(2)}× mean); ` +
      `\`kubectl get nodes <one>\` / \`node -e 0\`: ${(kube.p50 / node.p50).toFixed(2)}× (p50); meshctl / kubectl: ${(one.p50 / kube.p50).toFixed(2)}× (p50).`,
    `Where meshctl's time goes (p50): Node's own start-up ${ms(node.p50)} ms, loading the bundle and parsing flags ` +
      `+${ms(help.p50 - node.p50)} ms, the TLS connection, request and printing +${ms(one.p50 - help.p50)} ms.`,
    `Target (issue 14): \`meshctl get nodes <one>\` ≤ 1.10× \`node -e 0\` — ${verdict(ratio <= 1.1)}.`,
  ];
}

if (isMain(import.meta.url)) {
  process.stdout.write((await cliStartupSection()) + '\n');
}
