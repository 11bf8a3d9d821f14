/**
 * Probe (issue 14): the cost of one all-nodes change at N agents, accounted. A baseline window of W ms with the
 * agents only heartbeating, then a window of the same length that starts with the change; per window the control
 * plane's and the agents' worker processes' CPU-seconds, its requests by (client, verb, resource) from /metrics and its
 * store writes by resource from the journal. Prints the differences per node. Run: `N=1000 ROUNDS=4 LOGS=3600000 node
 * --import tsx bench/fan-probe.ts` (LOGS: the agents' log interval, ms; SETTLE: the wait before round 1, ms, and with
 * SETTLE_EACH=1 before every round;
 * SCALE_CP_NODE_ARGS as for bench/scale.ts: the `window-us` lines bound each change window in the CPU profile's clock;
 * with `--trace-gc`, each window's GC pauses). Per change it also prints when the nodes' Declarations reached the admin
 * watch re-rendered (`written`), reported applied (`applied`) and their Assignments Applied (`assigned`), as
 * percentiles from the update.
 */
import { performance } from 'node:perf_hooks';
import { createClient } from '../api/client/http-client.ts';
import { httpRequest } from '../test/harness.ts';
import { gcOf } from './lib/gc-trace.ts';
import { sleep } from './lib/load.ts';
import { cpuSecondsOf } from './lib/proc.ts';
import { agentRoundTimes, RoundTracker, rvOf } from './lib/round-tracker.ts';
import { startBenchMesh } from './lib/scale-mesh.ts';
import { journalMark, writesSince } from './lib/journal-lines.ts';
import { fanoutModule } from './lib/scale-probes.ts';

const N = Number(process.env.N ?? 1000);
/** DECL_WATCH=0: the written and applied marks come from the agents (sim-agent.ts RoundMark), not an admin watch of every Declaration. */
const DECL_WATCH = process.env.DECL_WATCH !== '0';
const W = Number(process.env.W ?? 10_000);
/** SETTLE: how long the agents only heartbeat after round 0, ms (the scale bench's first change follows ~4 min of it). */
const SETTLE_MS = Number(process.env.SETTLE ?? 15_000);
/** SETTLE_EACH=1: as long before every later round too (a mesh's changes come after quiet minutes, not back to back). */
const SETTLE_EACH = process.env.SETTLE_EACH === '1';
const mesh = await startBenchMesh(N, { logEveryMs: Number(process.env.LOGS ?? 30_000) });
const client = createClient(mesh.cp.config);
const metrics = async (): Promise<Map<string, number>> => {
  const text = (await httpRequest(mesh.cp.config, 'GET', '/metrics')).text;
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    const x = /^meshctl_apiserver_requests_total(\{[^}]*\}) (\d+)/.exec(line);
    if (x) m.set(x[1], Number(x[2]));
    const r = /^meshctl_apiserver_rejected_requests_total(\{[^}]*\}) (\d+)/.exec(line);
    if (r) m.set(`refused ${r[1]}`, Number(r[2]));
  }
  return m;
};
/** How many times `needle` occurs in `text`. */
const count = (text: string, needle: string): number => text.split(needle).length - 1;
async function window(change: boolean, round: number, tracker: RoundTracker, stored: { rv: string }) {
  const m0 = await metrics();
  const mark = mesh.cp.output().length;
  const j0 = journalMark(mesh.cp.dataDir);
  const c0 = cpuSecondsOf(mesh.cp.pid);
  const agentCpu = (): number => mesh.workerPids().reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
  const a0 = agentCpu();
  const t0 = performance.now();
  let appliedMs: number[] = [];
  if (change) {
    const done = tracker.expect(round, 120_000);
    const upd = await client.update('modules', fanoutModule(round, stored.rv));
    stored.rv = rvOf(upd);
    const marks = await done;
    const fromAgents = DECL_WATCH ? undefined : agentRoundTimes(await mesh.marks(), round, performance.timeOrigin + t0);
    appliedMs = fromAgents?.applied ?? [...marks.applied.values()].map((t) => t - t0);
    const wr = (fromAgents?.written ?? [...marks.written.values()].map((t) => t - t0)).sort((a, b) => a - b);
    const asg = [...marks.assigned.values()].map((t) => t - t0).sort((a, b) => a - b);
    const q = (a: number[], f: number) => a[Math.floor(a.length * f)]?.toFixed(0);
    process.stdout.write(
      `  written p10 ${q(wr, 0.1)} p50 ${q(wr, 0.5)} p90 ${q(wr, 0.9)} p99 ${q(wr, 0.99)}; assigned p50 ${q(asg, 0.5)} p99 ${q(asg, 0.99)}\n`,
    );
    const ap = [...appliedMs].sort((a, b) => a - b);
    process.stdout.write(
      `  applied (${appliedMs.length} nodes) p10 ${q(ap, 0.1)} p50 ${q(ap, 0.5)} p90 ${q(ap, 0.9)} p99 ${q(ap, 0.99)}\n`,
    );
  }
  await sleep(Math.max(0, W - (performance.now() - t0)));
  const cpu = cpuSecondsOf(mesh.cp.pid) - c0;
  const agents = agentCpu() - a0;
  const m1 = await metrics();
  const gc = gcOf(mesh.cp.output().slice(mark));
  const compactions = count(mesh.cp.output().slice(mark), 'Started compaction');
  const compacted = [
    ...mesh.cp
      .output()
      .slice(mark)
      .matchAll(/"msg":"Compacted store".*?"ms":(\d+)/g),
  ].map((m) => `${m[1]} ms`);
  const req = new Map<string, number>();
  for (const [k, v] of m1) if (v - (m0.get(k) ?? 0) > 0) req.set(k, v - (m0.get(k) ?? 0));
  const writes = writesSince(j0);
  appliedMs.sort((a, b) => a - b);
  return {
    cpu,
    agents,
    gc,
    compactions,
    compacted,
    req,
    writes,
    p50: appliedMs[Math.floor(appliedMs.length / 2)],
    p99: appliedMs[Math.floor(appliedMs.length * 0.99)],
    max: appliedMs.at(-1),
  };
}
try {
  const tracker = new RoundTracker(N);
  await tracker.open(client, (await client.list('meshes')).metadata.resourceVersion, { declarations: DECL_WATCH });
  const ready = tracker.expect(0, 300_000);
  const stored = { rv: rvOf(await client.create('modules', fanoutModule(0))) };
  mesh.startAgents();
  await ready;
  process.stderr.write(`probe: round 0 applied on ${N}\n`);
  await sleep(SETTLE_MS);
  const rounds = Number(process.env.ROUNDS ?? 2);
  for (let r = 1; r <= rounds; r++) {
    if (r > 1 && SETTLE_EACH) await sleep(SETTLE_MS);
    const base = await window(false, r, tracker, stored);
    const us0 = process.hrtime.bigint() / 1000n;
    const ch = await window(true, r, tracker, stored);
    process.stdout.write(`window-us ${us0} ${process.hrtime.bigint() / 1000n}\n`);
    const out: string[] = [
      `round ${r}: cpu base ${base.cpu.toFixed(2)} s, change ${ch.cpu.toFixed(2)} s, diff ${(ch.cpu - base.cpu).toFixed(2)} s; agents' processes ${base.agents.toFixed(2)} → ${ch.agents.toFixed(2)} s; applied p50 ${ch.p50?.toFixed(0)} p99 ${ch.p99?.toFixed(0)} max ${ch.max?.toFixed(0)} ms`,
    ];
    const keys = new Set([...base.req.keys(), ...ch.req.keys()]);
    for (const k of [...keys].sort())
      out.push(
        `  req ${k}: base ${base.req.get(k) ?? 0} change ${ch.req.get(k) ?? 0} per node ${(((ch.req.get(k) ?? 0) - (base.req.get(k) ?? 0)) / N).toFixed(2)}`,
      );
    const wk = new Set([...base.writes.keys(), ...ch.writes.keys()]);
    for (const k of [...wk].sort())
      out.push(
        `  write ${k}: base ${base.writes.get(k) ?? 0} change ${ch.writes.get(k) ?? 0} per node ${(((ch.writes.get(k) ?? 0) - (base.writes.get(k) ?? 0)) / N).toFixed(2)}`,
      );
    out.push(`  GC (--trace-gc): base ${base.gc}; change ${ch.gc}`);
    out.push(
      `  store compactions started: base ${base.compactions}, change ${ch.compactions}; done in: ${[...base.compacted, ...ch.compacted].join(', ') || '-'}`,
    );
    const log = mesh.cp.output();
    out.push(
      `  control-plane log so far: ${count(log, 'Watch expired, relisting')} relists after a 410, ${count(log, 'Reconcile raced a write')} conflicts retried, ${count(log, '"Reconcile failed')} failed reconciles`,
    );
    process.stdout.write(out.join('\n') + '\n');
  }
  tracker.close();
} finally {
  client.close();
  await mesh.stop();
}
