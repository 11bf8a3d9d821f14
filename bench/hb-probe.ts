/**
 * Probe (issue 14): what the control plane's CPU in the scale bench's heartbeat phase is made of. After round 0 is
 * applied: optionally (`TIMELINE_S`) its CPU, requests by kind and GC every 2 s; its CPU with the agents running
 * 15 s after round 0 (where the bench's window used to be) and again once every overlay address is written
 * (`OVERLAY_WAIT_S`, default 600) and `SETTLE_S` (10) later, with the requests counted by kind and the connections
 * opened meanwhile; the same with the bench's 1 s sampler (lib/scale-memory.ts); the floor with every connection open
 * and no request (the agents' worker processes SIGSTOPped); the cost of one `/metrics` answer; and, with the agents
 * stopped again, the cost of one heartbeat and of one log POST sent by the probe itself over node credentials.
 * Windows last `WINDOW_S` (20) s. With `SCALE_CP_NODE_ARGS=--trace-gc` it sums the GC pauses in each window; each
 * window's bounds are printed in the clock of a `--cpu-prof` profile; `PERF=FILE` records the first window with perf.
 * Run: `N=1000 node --import tsx bench/hb-probe.ts` (more than 1,000 agents under the machine's bench lock).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createClient, type HttpClient } from '../api/client/http-client.ts';
import { logsPath } from '../api/wire/log-wire.ts';
import { gcOf } from './lib/gc-trace.ts';
import { sleep } from './lib/load.ts';
import { cpuSecondsOf } from './lib/proc.ts';
import { RoundTracker } from './lib/round-tracker.ts';
import { startBenchMesh, type ScaleMesh } from './lib/scale-mesh.ts';
import { MemoryPhases } from './lib/scale-memory.ts';
import { fanoutModule, ratesBetween, requestCounts } from './lib/scale-probes.ts';

const N = Number(process.env.N ?? 1000);
const WINDOW_MS = Number(process.env.WINDOW_S ?? 20) * 1000;
const SENDERS = 20;
const out: string[] = [];
const say = (line: string): void => {
  out.push(line);
  process.stderr.write(`hb-probe: ${line}\n`);
};

/** CPU seconds by thread name (main thread `node`, V8's GC helpers, libuv's pool…) from /proc/<pid>/task. */
function threadCpu(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '#');
      const f = stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .map(Number);
      byName.set(name, (byName.get(name) ?? 0) + (f[11] + f[12]) / 100);
    } catch {
      // the thread ended
    }
  }
  return byName;
}

/** The threads' CPU seconds between two `threadCpu` readings, largest first. */
function threadLine(a: Map<string, number>, b: Map<string, number>): string {
  return [...b]
    .map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const)
    .filter(([, v]) => v > 0)
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
}

/** Runs `during` (or waits `ms`) and reports the control plane's CPU over it. */
async function window(mesh: ScaleMesh, label: string, ms: number, during?: () => Promise<number | void>) {
  const pid = mesh.cp.pid;
  const mark = mesh.cp.output().length;
  const c0 = cpuSecondsOf(pid);
  const th0 = threadCpu(pid);
  const t0 = performance.now();
  const us0 = process.hrtime.bigint() / 1000n;
  const count = during ? await during() : await sleep(ms);
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuSecondsOf(pid) - c0;
  const gc = gcOf(mesh.cp.output().slice(mark));
  const threads = threadLine(th0, threadCpu(pid));
  const us = `${us0}-${process.hrtime.bigint() / 1000n}`; // the window in a --cpu-prof profile's clock (µs)
  say(
    `${label}: ${cpu.toFixed(2)} CPU-s over ${wall.toFixed(1)} s = ${((cpu * 100) / wall).toFixed(1)} % of a core; GC ${gc} [${us}]`,
  );
  say(`  threads (CPU-s): ${threads}`);
  return { cpu, wall, count: typeof count === 'number' ? count : 0 };
}

/** The control plane's established connections (peer addresses), to count those opened during a window. */
function connections(port: string): Set<string> {
  const text = execFileSync('ss', ['-Htn', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' });
  return new Set(
    text
      .split('\n')
      .map((l) => l.trim().split(/\s+/).at(-1) ?? '')
      .filter(Boolean),
  );
}

/** `PERF=FILE`: perf record -g of the control plane over the window (perf's own process, stopped with SIGINT). */
function perfRecord(pid: number, ms: number) {
  return spawn(
    'perf',
    ['record', '-g', '-F', '499', '-o', process.env.PERF!, '-p', String(pid), '--', 'sleep', String(ms / 1000)],
    {
      stdio: 'ignore',
    },
  );
}

/** Signals every worker process. */
const signal = (mesh: ScaleMesh, sig: NodeJS.Signals): void => mesh.workerPids().forEach((p) => process.kill(p, sig));

/** `total` requests made by `one(sender, i)` over SENDERS node connections, each sender sequentially. */
async function burst(senders: Array<() => Promise<unknown>>, total: number): Promise<number> {
  let left = total;
  await Promise.all(
    senders.map(async (send) => {
      while (left-- > 0) await send();
    }),
  );
  return total;
}

const mesh = await startBenchMesh(N);
const admin = createClient(mesh.cp.config);
const nodeClients: HttpClient[] = [];
try {
  const tracker = new RoundTracker(N);
  await tracker.open(admin, (await admin.list('meshes')).metadata.resourceVersion);
  const ready = tracker.expect(0, 300_000);
  await admin.create('modules', fanoutModule(0));
  mesh.startAgents();
  await ready;
  tracker.close();
  say(`N = ${N}, pid ${mesh.cp.pid}`);
  if (!process.env.TIMELINE_S) await sleep(15_000);

  const port = new URL(mesh.cp.url).port;
  const overlayWrites = async (): Promise<number> => (await requestCounts(admin)).get('admin PATCH nodes/status') ?? 0;
  const active = async (label: string) => {
    const before = await requestCounts(admin);
    const conns0 = connections(port);
    const perf = process.env.PERF ? perfRecord(mesh.cp.pid, WINDOW_MS) : undefined;
    const w = await window(mesh, label, WINDOW_MS);
    perf?.kill('SIGINT');
    const conns1 = connections(port);
    say(`  connections: ${conns0.size} → ${conns1.size}, ${[...conns1].filter((c) => !conns0.has(c)).length} opened`);
    const rates = ratesBetween(before, await requestCounts(admin), w.wall);
    for (const [k, v] of rates) say(`  ${k}: ${v.toFixed(1)}/s`);
    const agentRate = [...rates].reduce((a, [k, v]) => (k.startsWith('node ') ? a + v : a), 0);
    return { ...w, agentRate };
  };
  say(`overlay addresses written so far: ${await overlayWrites()} of ${N}`);
  // TIMELINE_S: the control plane's CPU and requests every 2 s from round 0 applied on (how long the set-up's tail lasts).
  for (let t = 0, last = await requestCounts(admin); t < Number(process.env.TIMELINE_S ?? 0); t += 2) {
    const mark = mesh.cp.output().length;
    const c0 = cpuSecondsOf(mesh.cp.pid);
    await sleep(2000);
    const now = await requestCounts(admin);
    const rates = [...ratesBetween(last, now, 2)].map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ');
    last = now;
    const gc = gcOf(mesh.cp.output().slice(mark));
    say(`  t=${t + 2} s: ${((cpuSecondsOf(mesh.cp.pid) - c0) * 50).toFixed(0)} %; ${rates}; GC ${gc}`);
  }
  await active('agents running, 15 s after round 0 (where the bench measured)');
  const s0 = performance.now();
  while ((await overlayWrites()) < N && performance.now() - s0 < Number(process.env.OVERLAY_WAIT_S ?? 600) * 1000)
    await sleep(2000);
  say(
    `every overlay address written ${((performance.now() - s0) / 1000).toFixed(0)} s later (${await overlayWrites()})`,
  );
  await sleep(Number(process.env.SETTLE_S ?? 10) * 1000);
  const steady = await active('agents running, steady (no sampler)');
  const sampler = new MemoryPhases(() => ({ pid: mesh.cp.pid, config: mesh.cp.config }));
  await window(mesh, "agents running, the bench's 1 s sampler", WINDOW_MS);
  await sampler.stop();

  signal(mesh, 'SIGSTOP');
  await sleep(2000);
  const floor = await window(mesh, 'agents stopped (floor)', 15_000);
  const floorRate = floor.cpu / floor.wall;
  const scrapes = await window(mesh, 'agents stopped, 50 /metrics', 0, async () => {
    for (let i = 0; i < 50; i++) await requestCounts(admin);
    return 50;
  });
  say(`  one /metrics: ${(((scrapes.cpu - floorRate * scrapes.wall) * 1000) / 50).toFixed(2)} ms CPU`);
  signal(mesh, 'SIGCONT');
  await sleep(15_000);

  // The probe's own heartbeats and log POSTs, each over a node's credential, with the agents stopped again.
  const creds = mesh.credentials.slice(0, SENDERS);
  for (const c of creds) nodeClients.push(createClient({ ...mesh.cp.config, token: c.token }));
  const statuses = await Promise.all(creds.map((c) => admin.get('nodes', c.node)));
  signal(mesh, 'SIGSTOP');
  await sleep(2000);
  const beats = nodeClients.map((client, i) => () => {
    const s = statuses[i].status ?? {};
    const status = {
      controlPlaneLastContact: new Date().toISOString(),
      agentVersion: s.agentVersion,
      declaration: { appliedGeneration: s.declaration?.appliedGeneration },
    };
    return client.patch('nodes', creds[i].node, { status }, { subresource: 'status' });
  });
  const c0 = await requestCounts(admin);
  const hb = await window(mesh, 'agents stopped, probe heartbeats', 0, () => burst(beats, 3000));
  let seq = 0;
  const posts = nodeClients.map((client, i) => () => {
    const time = new Date().toISOString();
    const entries = [0, 1].map(() => ({ seq: ++seq, service: 'bench/app', time, line: `probe line ${seq}` }));
    return client.transport.json({ method: 'POST', path: logsPath(creds[i].node), body: { stream: 'probe', entries } });
  });
  const lg = await window(mesh, 'agents stopped, probe log POSTs', 0, () => burst(posts, 3000));
  signal(mesh, 'SIGCONT');
  const counted = ratesBetween(c0, await requestCounts(admin), 1);
  for (const [k, v] of counted) if (k.startsWith('node ')) say(`  counted ${k}: ${v}`);
  const per = (w: { cpu: number; wall: number; count: number }): string =>
    (((w.cpu - floorRate * w.wall) * 1000) / w.count).toFixed(3);
  say(
    `  steady: ${(((steady.cpu - floorRate * steady.wall) * 1000) / (steady.agentRate * steady.wall)).toFixed(3)} ms CPU per agent request above the floor`,
  );
  say(`  one heartbeat: ${per(hb)} ms CPU; one log POST (2 lines): ${per(lg)} ms CPU (floor subtracted)`);
  await sleep(5000);
} finally {
  signal(mesh, 'SIGCONT');
  for (const c of nodeClients) c.close();
  admin.close();
  await mesh.stop();
}
process.stdout.write(out.join('\n') + '\n');
