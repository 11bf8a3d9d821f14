/**
 * The scale benchmark's probes: control-plane CPU over a window, the latency of one node's change, the
 * `meshctl get nodes` timings, and the thundering herd (every Node seen again after a restart).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { HttpClient } from '../../api/client/http-client.ts';
import { startListWatch } from '../../api/client/list-watch.ts';
import type { Client } from '../../api/client/types.ts';
import { findCondition } from '../../api/meta/conditions.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import type { Module } from '../../api/v1alpha1/generated/module.ts';
import type { Node } from '../../api/v1alpha1/generated/node.ts';
import { REPO_ROOT } from '../../test/harness.ts';
import { sleep } from './load.ts';
import type { ScaleMesh } from './scale-mesh.ts';
import { cpuSecondsOf } from './proc.ts';
import { contentOf, versionOf } from './round-tracker.ts';

/** CPU seconds `pid` used over `windowMs` of wall time, as a percentage of one core. */
export async function cpuPercent(pid: number, windowMs: number): Promise<number> {
  const before = cpuSecondsOf(pid);
  const t0 = performance.now();
  await sleep(windowMs);
  return ((cpuSecondsOf(pid) - before) * 100_000) / (performance.now() - t0);
}

/** How long the agents are stopped to measure the floor (their last heartbeats are then at most 10 + 2 + 15 s old). */
export const FLOOR_MS = 15_000;

/**
 * The control plane's floor: its CPU with every agent connection and watch open and no request, the agents' worker
 * processes SIGSTOPped for `windowMs` (timers per connection and watch, the controllers' periodic work, GC, the 1 s
 * sampler), to be kept well within the grace period, so that no Node turns unreachable. Resumes them and lets them catch up.
 */
export async function agentsStoppedCpu(mesh: ScaleMesh, windowMs: number): Promise<number> {
  const signal = (sig: NodeJS.Signals): void => mesh.workerPids().forEach((pid) => process.kill(pid, sig));
  signal('SIGSTOP');
  try {
    await sleep(2000);
    return await cpuPercent(mesh.cp.pid, windowMs);
  } finally {
    signal('SIGCONT');
    await sleep(5000);
  }
}

/** The all-nodes Module (named `scale`, assigned to every node by the fixture): one File whose content names the round. */
export function fanoutModule(round: number, resourceVersion?: string): Module {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Module',
    metadata: { name: 'scale', ...(resourceVersion ? { resourceVersion } : {}) },
    spec: {
      version: versionOf(round),
      resources: [
        { id: 'config', kind: 'File', spec: { path: '/srv/scale.txt', content: contentOf(round), mode: '0644' } },
      ],
    },
  };
}

/** The one-node Module: a File whose content names the round. */
export function soloModule(name: string, round: number, resourceVersion?: string): Module {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Module',
    metadata: { name, ...(resourceVersion ? { resourceVersion } : {}) },
    spec: {
      version: `2.0.${round}`,
      resources: [
        { id: 'solo', kind: 'File', spec: { path: '/srv/solo.txt', content: `solo=${round}\n`, mode: '0644' } },
      ],
    },
  };
}

const soloRound = (d: Declaration): number => {
  for (const r of d.spec.resources) {
    const m = r.kind === 'File' ? /^solo=(\d+)\n/.exec(r.spec.content ?? '') : null;
    if (m) return Number(m[1]);
  }
  return -1;
};

/** Polls `node`'s Declaration every `everyMs` until it renders solo round `round` and reports it applied. */
export async function waitSoloApplied(client: Client, node: string, round: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const d = await client.get('declarations', node);
    if (soloRound(d) === round && d.status?.appliedGeneration === d.spec.generation) return;
    if (performance.now() > deadline) throw new Error(`${node} did not apply solo round ${round} in ${timeoutMs} ms`);
    await sleep(5);
  }
}

/**
 * Wall ms of `node dist/meshctl.js --config <meshconfig> ...args`, checked with `check` on its stdout. Run
 * asynchronously, so that the benchmark's own probes (the memory sampler) go on while it runs.
 */
export async function timeMeshctl(
  meshconfig: string,
  args: string[],
  check: (out: string) => boolean,
): Promise<number> {
  const t0 = performance.now();
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [join(REPO_ROOT, 'dist', 'meshctl.js'), '--config', meshconfig, ...args],
      { encoding: 'utf8', maxBuffer: 64 << 20 },
      (err, stdout, stderr) => resolve({ status: err ? (child.exitCode ?? -1) : 0, stdout, stderr }),
    );
  });
  const ms = performance.now() - t0;
  if (r.status !== 0 || !check(r.stdout))
    throw new Error(`meshctl ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return ms;
}

/** True when `n` has a heartbeat written at or after `sinceMs` and is Reachable. */
function isBack(n: Node, sinceMs: number): boolean {
  const beat = Date.parse(n.status?.controlPlaneLastContact ?? '');
  const seen = Date.parse(n.status?.lastSeen ?? '');
  return (beat >= sinceMs || seen >= sinceMs) && findCondition(n.status?.conditions, 'Reachable')?.status === 'True';
}

/** The Nodes not yet back after a time, and what a few of them say (to tell why, when some never come back). */
export interface NotBack {
  count: number;
  total: number;
  /** Up to 3: `name contact=… lastSeen=… Reachable=status/reason`. */
  sample: string[];
}

/**
 * Nodes not yet back after `sinceMs`: not Reachable=True, or no heartbeat since — neither a contact time the agent
 * wrote since (status.controlPlaneLastContact, the agent's clock: the same machine's here) nor a `lastSeen` the
 * restarted control plane stored since (its own observation; it persists each node's first heartbeat at once).
 * Either alone can lag: a heartbeat built just before the kill and delivered after the restart stores an old
 * contact time, and the heartbeats after it are leases that are persisted only every persist interval (200 s at
 * N = 5,000), so the stored contact can stay older than the kill while the node heartbeats.
 */
export async function nodesNotBack(client: Client, sinceMs: number): Promise<NotBack> {
  const nodes = (await client.list('nodes')).items;
  const left = nodes.filter((n) => !isBack(n, sinceMs));
  const sample = left.slice(0, 3).map((n) => {
    const c = findCondition(n.status?.conditions, 'Reachable');
    return `${n.metadata.name} contact=${n.status?.controlPlaneLastContact} lastSeen=${n.status?.lastSeen} Reachable=${c?.status}/${c?.reason}`;
  });
  return { count: left.length, total: nodes.length, sample };
}

/** What `waitAllBack` found: when every Node was back (NaN if not within the time), when 99 % were, what was left. */
export interface HerdResult {
  ms: number;
  ms99: number;
  left: number;
  sample: string[];
}

/**
 * Follows the Nodes (one list, then a watch: api/client/list-watch.ts) until every one is seen again after
 * `sinceMs`; times are ms after `t0`, taken when the event that brought the last one (or the 99th percent) back
 * arrived. A watch, not a poll: a poll adds up to its interval to each figure, and at N = 5,000 a list of every
 * Node every 2 s was a measurable part of the restarted control plane's work.
 */
export async function waitAllBack(client: Client, sinceMs: number, t0: number, timeoutMs: number): Promise<HerdResult> {
  const nodes = new Map<string, Node>();
  let notBack = new Set<string>();
  let ms99 = NaN;
  let finish: (() => void) | undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const check = (): void => {
    if (Number.isNaN(ms99) && nodes.size > 0 && notBack.size <= nodes.size / 100) ms99 = performance.now() - t0;
    if (nodes.size > 0 && notBack.size === 0) finish?.();
  };
  const see = (n: Node): void => {
    const name = n.metadata.name ?? '';
    nodes.set(name, n);
    if (isBack(n, sinceMs)) notBack.delete(name);
    else notBack.add(name);
  };
  const watch = startListWatch<Node>({
    client,
    plural: 'nodes',
    onList(items) {
      nodes.clear();
      notBack = new Set();
      items.forEach(see);
      check();
    },
    onEvent(ev) {
      if (ev.type === 'DELETED') {
        nodes.delete(ev.object.metadata.name ?? '');
        notBack.delete(ev.object.metadata.name ?? '');
      } else see(ev.object);
      check();
    },
    onFailure: () => {},
  });
  const timer = setTimeout(() => finish?.(), Math.max(0, timeoutMs - (performance.now() - t0)));
  await done;
  clearTimeout(timer);
  await watch.stop();
  if (nodes.size > 0 && notBack.size === 0) return { ms: performance.now() - t0, ms99, left: 0, sample: [] };
  const last = await nodesNotBack(client, sinceMs).catch(() => undefined);
  return { ms: NaN, ms99, left: last?.count ?? notBack.size, sample: last?.sample ?? [] };
}

/**
 * Polls the Nodes every `everyMs` until none is `lacking`; resolves with the ms it took, or throws after
 * `timeoutMs` saying how many Nodes `what` (e.g. "had no overlay address").
 */
async function waitEveryNode(
  client: Client,
  lacking: (n: Node) => boolean,
  opts: { timeoutMs: number; everyMs: number; what: string },
): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const nodes = (await client.list('nodes')).items;
    const missing = nodes.filter(lacking).length;
    if (missing === 0) return performance.now() - t0;
    if (performance.now() - t0 > opts.timeoutMs)
      throw new Error(`${missing} of ${nodes.length} Nodes ${opts.what} after ${opts.timeoutMs} ms`);
    await sleep(opts.everyMs);
  }
}

/**
 * Waits until every Node's status shows its Declaration applied (`declaration.appliedGeneration` equal to
 * `desiredGeneration`): the Node controller writes those after a change, at N = 5,000 for some 15 s after the
 * last agent applied it. Returns the ms waited.
 */
export function waitNodesSettled(client: Client, timeoutMs: number): Promise<number> {
  const behind = (n: Node): boolean => {
    const d = n.status?.declaration;
    return d?.desiredGeneration === undefined || d.appliedGeneration !== d.desiredGeneration;
  };
  return waitEveryNode(client, behind, { timeoutMs, everyMs: 2000, what: 'did not show their Declaration applied' });
}

/**
 * Waits until every Node has its overlay address (the overlay controller gives the fixture's N Nodes theirs one at a
 * time after the start: one-time work that must not be counted as the heartbeat's); resolves with the ms it took.
 */
export function waitOverlayAddresses(client: Client, timeoutMs: number): Promise<number> {
  const lacking = (n: Node): boolean => !n.status?.overlay?.address;
  return waitEveryNode(client, lacking, { timeoutMs, everyMs: 5000, what: 'had no overlay address' });
}

/**
 * Waits until `performance.now()` passes `notBefore` and the control plane counted `n` log POSTs of the agents (so
 * each has shipped about once), or `timeoutMs`; resolves with the ms it waited.
 */
export async function waitFirstLogs(client: HttpClient, n: number, notBefore: number, timeoutMs: number) {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    const posts = (await requestCounts(client)).get('node POST logs') ?? 0;
    if (posts >= n && performance.now() >= notBefore) break;
    await sleep(1000);
  }
  return performance.now() - t0;
}

/** Requests the control plane counted (`meshctl_apiserver_requests_total`), by `client verb resource`. */
export async function requestCounts(client: HttpClient): Promise<Map<string, number>> {
  const res = await client.transport.send({ method: 'GET', path: '/metrics', stream: true });
  let text = '';
  for await (const chunk of res) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  if (res.statusCode !== 200) throw new Error(`GET /metrics answered ${res.statusCode}: ${text.slice(0, 200)}`);
  const out = new Map<string, number>();
  const re = /^meshctl_apiserver_requests_total\{client="([^"]*)",verb="([^"]*)",resource="([^"]*)"\} (\d+)$/gm;
  for (const m of text.matchAll(re)) out.set(`${m[1]} ${m[2]} ${m[3]}`, Number(m[4]));
  return out;
}

/** Per second over `seconds`: how many requests of each kind were counted between two `requestCounts`. */
export function ratesBetween(before: Map<string, number>, after: Map<string, number>, seconds: number) {
  const rates = new Map<string, number>();
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) rates.set(k, d / seconds);
  }
  return rates;
}
