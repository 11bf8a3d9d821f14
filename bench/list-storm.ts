/**
 * Benchmark: a request storm against the real control plane (`mesh-control-plane` through spawnControlPlane, its
 * own process, plain HTTP on loopback) holding 10,000 Nodes (~1 KiB each): 1,000 concurrent GETs of the whole list
 * and 1,000 watchers from resourceVersion 0, all as the admin, while a joined node reads its Node and writes its
 * status as an agent does (in its own process, with the real client: bench/lib/agent-loop.ts). The per-client watch cap is raised to 1,000 so that every watcher is really served
 * (each reads all 10,000 initial events); the lists meet the default in-flight caps. It reports the control
 * plane's peak RSS (target: under 512 MiB), how many storm requests were answered 200 and how many 429, how many
 * watchers received every initial event, the control plane's own refusal counters (`/metrics`), and whether
 * every agent request succeeded.
 * Run alone: `node --import tsx bench/list-storm.ts` prints the markdown section.
 */
import { spawnControlPlane } from '../test/harness.ts';
import { createToken, newNodeKey, postJoin, asNode } from '../test/e2e/join-helpers.ts';
import { isMain } from './lib/child.ts';
import { makeAgent, requestJson } from './lib/http.ts';
import { memoryOf } from './lib/proc.ts';
import { makeNodeObject } from './lib/node-object.ts';
import { verdict } from './lib/stats.ts';
import type { ClientConfig } from '../api/client/types.ts';
import { spawn } from 'node:child_process';
import * as http from 'node:http';
import { join } from 'node:path';

const OBJECTS = 10_000;
const LISTS = 1_000;
const WATCHERS = 1_000;
const RSS_BOUND_MIB = 512;
const BASE = '/apis/meshctl.dev/v1alpha1/nodes';
/** How long a watcher may take to receive its 10,000 initial events before it is cut off. */
const WATCH_WINDOW_MS = 120_000;

function get(config: ClientConfig, path: string): http.ClientRequest {
  const u = new URL(path, config.server);
  const headers = { authorization: `Bearer ${config.token}` };
  return http.request({ hostname: u.hostname, port: u.port, path: u.pathname + u.search, headers, agent: false });
}

/** Failures that were not an HTTP answer, by error code (connection errors of the storm's requests). */
const connectionErrors = new Map<string, number>();

function countError(e: unknown): void {
  const code = (e as { code?: string }).code ?? (e instanceof Error ? e.message : String(e));
  connectionErrors.set(code, (connectionErrors.get(code) ?? 0) + 1);
}

/** One GET whose body is read and dropped; resolves with the status code (0: no answer, counted by error). */
function getStatus(config: ClientConfig, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = get(config, path);
    req.on('error', (e) => {
      countError(e);
      resolve(0);
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0)).on('error', () => resolve(0));
    });
    req.end();
  });
}

/** A watcher: `status` once answered; `synced` true once it has read `OBJECTS` event lines (then it hangs up). */
function watcher(config: ClientConfig): { status: Promise<number>; synced: Promise<boolean> } {
  let answered: (code: number) => void = () => {};
  const status = new Promise<number>((resolve) => (answered = resolve));
  const synced = new Promise<boolean>((resolve) => {
    const req = get(config, `${BASE}?watch=1&resourceVersion=0`);
    const timer = setTimeout(() => req.destroy(), WATCH_WINDOW_MS);
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      answered(0);
      req.destroy();
      resolve(ok);
    };
    req.on('error', () => done(false));
    req.on('response', (res) => {
      answered(res.statusCode ?? 0);
      let lines = 0;
      res.on('data', (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
        if (lines >= OBJECTS) done(true);
      });
      res.on('close', () => done(false));
    });
    req.end();
  });
  return { status, synced };
}

/** The size of the whole list, as served. */
async function listSizeMiB(config: ClientConfig): Promise<number> {
  const res = await fetch(new URL(BASE, config.server), { headers: { authorization: `Bearer ${config.token}` } });
  return (await res.arrayBuffer()).byteLength / 2 ** 20;
}

/** The control plane's refusal counters with a non-zero value, from its `/metrics`. */
async function refusals(config: ClientConfig): Promise<string> {
  const res = await fetch(new URL('/metrics', config.server), { headers: { authorization: `Bearer ${config.token}` } });
  const text = await res.text();
  const counted = [
    ...text.matchAll(/^meshctl_apiserver_rejected_requests_total\{code="(\d+)",reason="(\w+)"\} (\d+)$/gm),
  ]
    .filter((m) => m[3] !== '0')
    .map((m) => `${m[2]} (${m[1]}): ${m[3]}`);
  return counted.join(', ') || 'none';
}

async function fill(config: ClientConfig): Promise<void> {
  const agent = makeAgent(config);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < OBJECTS) await requestJson(config, agent, 'POST', BASE, makeNodeObject(next++, 'storm'));
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  agent.destroy();
}

interface AgentCounts {
  ok: number;
  failed: number;
  /** What the failures were: an HTTP code and reason, or an error code. */
  why: Record<string, number>;
}

/** Runs bench/lib/agent-loop.ts (an agent's requests, in its own process) until `stop()`. */
function agentLoop(config: ClientConfig, name: string): { stop(): Promise<AgentCounts> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'lib', 'agent-loop.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, STORM_SERVER: config.server, STORM_TOKEN: config.token, STORM_NODE: name },
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    stop: async () => {
      child.stdin.end();
      await closed;
      return JSON.parse(out) as AgentCounts;
    },
  };
}

function tally(m: Map<string, number> | Record<string, number>): string {
  const entries = m instanceof Map ? [...m] : Object.entries(m);
  return entries.length ? ` (${entries.map(([k, n]) => `${k} ×${n}`).join(', ')})` : '';
}

export async function listStormSection(): Promise<string> {
  const cp = await spawnControlPlane({
    insecure: true,
    timeoutMs: 60_000,
    args: ['--max-watches-per-client', String(WATCHERS)],
  });
  try {
    await fill(cp.config);
    const { token } = await createToken(cp.config);
    const joined = await postJoin(cp.config, { token, nodeName: 'storm-agent', site: 'home', nodeKey: newNodeKey() });
    const node = asNode(cp.config, String(joined.json.credential));
    const listMiB = await listSizeMiB(cp.config);
    const before = memoryOf(cp.pid).rssMiB;
    const agentRun = agentLoop(node, 'storm-agent');
    const started = Date.now();
    const watchers = Array.from({ length: WATCHERS }, () => watcher(cp.config));
    const statuses = await Promise.all([
      ...Array.from({ length: LISTS }, () => getStatus(cp.config, BASE)),
      ...watchers.map((w) => w.status),
    ]);
    const synced = (await Promise.all(watchers.map((w) => w.synced))).filter(Boolean).length;
    const seconds = (Date.now() - started) / 1000;
    const agentCounts = await agentRun.stop();
    const count = (from: number, to: number, code: number): number =>
      statuses.slice(from, to).filter((s) => s === code).length;
    const peakMiB = memoryOf(cp.pid).hwmMiB;
    const alive = (await getStatus(cp.config, '/healthz')) === 200;
    const refused = await refusals(cp.config);
    return [
      '## 7. List storm (issue 9)',
      '',
      `${OBJECTS} Nodes (a list is ${listMiB.toFixed(1)} MiB); ${LISTS} concurrent lists and ${WATCHERS} watchers from resourceVersion 0, as the admin`,
      `(the control plane's per-client watch cap raised to ${WATCHERS}, every other limit at its default); ${seconds.toFixed(1)} s until`,
      'every list was answered and every watcher had read all its initial events (or gave up after 120 s).',
      'Watchers from resourceVersion 0 share one snapshot of the initial events per kind (api/store/watch-snapshots.ts),',
      'sent as each client drains; lists being sent are bounded to 128 MiB (api/server/resources/shared-lists.ts).',
      '',
      `- lists: ${count(0, LISTS, 200)} answered 200, ${count(0, LISTS, 429)} answered 429`,
      `- watches: ${count(LISTS, LISTS + WATCHERS, 200)} opened, ${count(LISTS, LISTS + WATCHERS, 429)} answered 429; ${synced} received all ${OBJECTS} initial events within ${WATCH_WINDOW_MS / 1000} s`,
      `- the control plane's refusals (\`/metrics\`): ${refused}`,
      `- agent requests during the storm: ${agentCounts.ok} succeeded, ${agentCounts.failed} failed${tally(agentCounts.why)}`,
      `- storm requests without an HTTP answer: ${[...connectionErrors.values()].reduce((a, b) => a + b, 0)}${tally(connectionErrors)}`,
      `- ${verdict(alive)} the control plane is alive afterwards`,
      `- ${verdict(peakMiB < RSS_BOUND_MIB)} peak RSS (VmHWM) ${peakMiB.toFixed(0)} MiB, ${before.toFixed(0)} MiB before the storm (bound ${RSS_BOUND_MIB} MiB)`,
      `- ${verdict(agentCounts.failed === 0 && agentCounts.ok > 0)} every agent request succeeded`,
    ].join('\n');
  } finally {
    await cp.stop();
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write((await listStormSection()) + '\n');
}
