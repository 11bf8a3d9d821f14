/**
 * Probe (issue 14): the herd at N agents, accounted. After round 0 is applied and the agents heartbeat, SIGKILL
 * and restart the control plane; then, until every Node is back (as bench/scale.ts judges it), the restarted
 * process's CPU-seconds (start-up included), its requests by (client, verb, resource) and its store writes by
 * resource, and every 2 s its CPU-seconds, the agents' worker processes', the connections the kernel dropped at its
 * full accept queue since it served (ListenOverflows), and what its /metrics says (requests in flight and waiting,
 * watches, the agents' requests by kind: as of when it answered, which may be seconds later). Run: `N=1000 node --import tsx bench/herd-probe.ts`
 * (more than 1,000 agents under the machine's bench lock); SCALE_CP_NODE_ARGS and SCALE_WORKER_NODE_ARGS pass more
 * flags to the control plane and to the workers (e.g. `--cpu-prof --cpu-prof-dir=DIR`: the workers write theirs
 * when they stop). SETTLE: how long the agents heartbeat before the kill, ms (15,000). FLOOR=1: then the agents are
 * stopped and resumed as bench/scale.ts's floor phase does (agentsStoppedCpu, FLOOR_MS), which puts their heartbeats
 * in step, and the kill follows: the herd as the scale bench meets it.
 */
import { performance } from 'node:perf_hooks';
import { createClient } from '../api/client/http-client.ts';
import { httpRequest } from '../test/harness.ts';
import { sleep } from './lib/load.ts';
import { cpuSecondsOf, listenOverflows } from './lib/proc.ts';
import { RoundTracker } from './lib/round-tracker.ts';
import { startBenchMesh } from './lib/scale-mesh.ts';
import { journalMark, writesSince } from './lib/journal-lines.ts';
import { agentsStoppedCpu, FLOOR_MS, fanoutModule, waitAllBack } from './lib/scale-probes.ts';

const N = Number(process.env.N ?? 1000);
const mesh = await startBenchMesh(N);
let client = createClient(mesh.cp.config);
try {
  const tracker = new RoundTracker(N);
  await tracker.open(client, (await client.list('meshes')).metadata.resourceVersion);
  const ready = tracker.expect(0, 300_000);
  await client.create('modules', fanoutModule(0));
  mesh.startAgents();
  await ready;
  tracker.close();
  await sleep(Number(process.env.SETTLE ?? 15_000));
  if (process.env.FLOOR === '1') await agentsStoppedCpu(mesh, FLOOR_MS);
  client.close();
  const killedAt = Date.now();
  const t0 = performance.now();
  await mesh.kill();
  const j0 = journalMark(mesh.cp.dataDir);
  await mesh.restart();
  const serving = performance.now() - t0;
  const servingCpu = cpuSecondsOf(mesh.cp.pid);
  const overflows0 = listenOverflows() ?? NaN;
  client = createClient(mesh.cp.config);
  const timeline: Array<[number, string]> = [];
  // Every 2 s: its CPU-seconds and the agents' worker processes', the connections dropped at the full accept queue,
  // then (when /metrics answers, which may take a while) requests in flight, waiting and open watches, and the
  // agents' requests so far by kind.
  const tick = setInterval(() => {
    const at = performance.now() - t0;
    const cpu = [mesh.cp.pid, ...mesh.workerPids()].map((p) => cpuSecondsOf(p).toFixed(1));
    const dropped = (listenOverflows() ?? NaN) - overflows0;
    const line = `${(at / 1000).toFixed(1)}s cpu ${cpu[0]} workers ${cpu.slice(1).join('/')} dropped ${dropped}`;
    void httpRequest(mesh.cp.config, 'GET', '/metrics').then(
      (r) => timeline.push([at, `${line} | ${gauges(r.text)}`]),
      () => timeline.push([at, `${line} | no /metrics`]),
    );
  }, 2000);
  const back = await waitAllBack(client, killedAt, t0, 180_000);
  clearInterval(tick);
  const allMs = back.ms / 1000;
  const ms99 = back.ms99 / 1000;
  const cpu = cpuSecondsOf(mesh.cp.pid);
  const text = (await httpRequest(mesh.cp.config, 'GET', '/metrics')).text;
  const writes = writesSince(j0);
  const out = [
    `serving ${(serving / 1000).toFixed(1)} s; all back ${allMs} s; 99% ${ms99} s; cpu ${cpu.toFixed(2)} s (${servingCpu.toFixed(2)} s of it until serving); ${(listenOverflows() ?? NaN) - overflows0} connections dropped at the full accept queue since serving`,
  ];
  out.push(...timeline.sort((a, b) => a[0] - b[0]).map(([, line]) => line));
  for (const m of text.matchAll(/^meshctl_apiserver_(?:requests|rejected_requests)_total(\{[^}]*\}) (\d+)$/gm))
    out.push(`  req ${m[1]} ${m[2]} per node ${(Number(m[2]) / N).toFixed(2)}`);
  for (const [k, v] of writes) out.push(`  write ${k} ${v} per node ${(v / N).toFixed(2)}`);
  process.stdout.write(out.join('\n') + '\n');
} finally {
  client.close();
  await mesh.stop();
}

/** The gauges and the agents' request counts of a /metrics text, for the timeline. */
function gauges(text: string): string {
  const gauge = (name: string): string => new RegExp(`^meshctl_apiserver_${name} (\\d+)`, 'm').exec(text)?.[1] ?? '?';
  const kinds = [
    'PATCH nodes/status',
    'PATCH declarations/status',
    'POST logs',
    'POST events',
    'GET declarations/watch',
  ];
  const count = (kind: string): string => {
    const [verb, resource] = kind.split(' ');
    const labels = `{client="node",verb="${verb}",resource="${resource}"}`;
    return (
      text
        .split('\n')
        .find((l) => l.startsWith(`meshctl_apiserver_requests_total${labels} `))
        ?.split(' ')[1] ?? '0'
    );
  };
  const counts = kinds.map((k) => `${k} ${count(k)}`).join(', ');
  return `inflight ${gauge('current_inflight_requests')} queued ${gauge('current_inqueue_requests')} watches ${gauge('open_watches')}; ${counts}`;
}
