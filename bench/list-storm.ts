/**
 * Benchmark: a request storm against the real control plane (`mesh-control-plane` through spawnControlPlane, its
 * own process, plain HTTP on loopback) holding 10,000 Nodes (~1 KiB each): 1,000 concurrent GETs of the whole list
 * and 1,000 watchers from resourceVersion 0, all as the admin, while a joined node reads its Node and writes its
 * status as an agent does. It reports the control plane's peak RSS (target: under 512 MiB), how many storm
 * requests were answered 200 and how many 429, and whether every agent request succeeded.
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
import * as http from 'node:http';

const OBJECTS = 10_000;
const LISTS = 1_000;
const WATCHERS = 1_000;
const RSS_BOUND_MIB = 512;
const BASE = '/apis/meshctl.dev/v1alpha1/nodes';

/** One GET whose body is read and dropped; resolves with the status code. */
function getStatus(config: ClientConfig, path: string, watch = false): Promise<number> {
  return new Promise((resolve) => {
    const u = new URL(path, config.server);
    const headers = { authorization: `Bearer ${config.token}` };
    const req = http.request({
      hostname: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      headers,
      agent: false,
    });
    req.on('error', () => resolve(0));
    req.on('response', (res) => {
      res.resume();
      if (watch && res.statusCode === 200) resolve(200);
      else res.on('end', () => resolve(res.statusCode ?? 0)).on('error', () => resolve(0));
    });
    req.end();
    if (watch) setTimeout(() => req.destroy(), 20_000).unref();
  });
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

/** Reads its Node and writes its status in a loop, as an agent does, until `stop()`; counts failures. */
function agentLoop(config: ClientConfig, name: string): { stop(): Promise<{ ok: number; failed: number }> } {
  const agent = makeAgent(config);
  let running = true;
  const counts = { ok: 0, failed: 0 };
  const loop = (async () => {
    while (running) {
      const got = await requestJson(config, agent, 'GET', `${BASE}/${name}`).catch(() => ({ status: 0, body: {} }));
      const patch = { status: { conditions: [] } };
      const put = await requestJson(
        config,
        agent,
        'PATCH',
        `${BASE}/${name}/status`,
        patch,
        'application/merge-patch+json',
      ).catch(() => ({ status: 0 }));
      for (const s of [got.status, put.status]) counts[s === 200 ? 'ok' : 'failed']++;
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      agent.destroy();
      return counts;
    },
  };
}

export async function listStormSection(): Promise<string> {
  const cp = await spawnControlPlane({ insecure: true, timeoutMs: 60_000 });
  try {
    await fill(cp.config);
    const { token } = await createToken(cp.config);
    const joined = await postJoin(cp.config, { token, nodeName: 'storm-agent', site: 'home', nodeKey: newNodeKey() });
    const node = asNode(cp.config, String(joined.json.credential));
    const before = memoryOf(cp.pid).rssMiB;
    const agentRun = agentLoop(node, 'storm-agent');
    const started = Date.now();
    const statuses = await Promise.all([
      ...Array.from({ length: LISTS }, () => getStatus(cp.config, BASE)),
      ...Array.from({ length: WATCHERS }, () => getStatus(cp.config, `${BASE}?watch=1&resourceVersion=0`, true)),
    ]);
    const seconds = (Date.now() - started) / 1000;
    const agentCounts = await agentRun.stop();
    const count = (from: number, to: number, code: number): number =>
      statuses.slice(from, to).filter((s) => s === code).length;
    const peakMiB = memoryOf(cp.pid).hwmMiB;
    const alive = (await getStatus(cp.config, '/healthz')) === 200;
    return [
      '## 7. List storm (issue 9)',
      '',
      `${OBJECTS} Nodes; ${LISTS} concurrent lists and ${WATCHERS} watchers from resourceVersion 0, as the admin (${seconds.toFixed(1)} s).`,
      '',
      `- lists: ${count(0, LISTS, 200)} answered 200, ${count(0, LISTS, 429)} answered 429`,
      `- watches: ${count(LISTS, LISTS + WATCHERS, 200)} opened, ${count(LISTS, LISTS + WATCHERS, 429)} answered 429`,
      `- agent requests during the storm: ${agentCounts.ok} succeeded, ${agentCounts.failed} failed`,
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
