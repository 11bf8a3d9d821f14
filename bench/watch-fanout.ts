/**
 * Benchmark 2: watch fan-out. The real control plane (`mesh-control-plane` through the test harness's
 * spawnControlPlane, its own process, plain HTTP on loopback) with 1,000 concurrent `?watch=1` connections
 * on `nodes` from this process, each a real HTTP connection parsing NDJSON. Then, repeatedly, one change
 * (a merge patch of one Node): the time until the last of the 1,000 watchers has parsed its event.
 * Run alone: `node --import tsx bench/watch-fanout.ts` prints the markdown section.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { spawnControlPlane } from '../test/harness.ts';
import { isMain } from './lib/child.ts';
import { makeAgent, openNdjson, requestJson, type LineStream } from './lib/http.ts';
import { sleep } from './lib/load.ts';
import { makeNodeObject } from './lib/node-object.ts';
import { ms, summarize, verdict } from './lib/stats.ts';
import type { ClientConfig } from '../api/client/types.ts';
import type { KubeObject, WatchEvent } from '../api/meta/types.ts';

const WATCHERS = 1_000;
const ROUNDS = 20;
const WARMUP_ROUNDS = 3;
const BASE = '/apis/meshctl.dev/v1alpha1/nodes';
const ROUND_LABEL = 'bench.meshctl.dev/round';

/** One change's timings (ms): from just before sending the patch, and from its acknowledgement. */
interface Round {
  first: number;
  last: number;
  lastAfterAck: number;
  ack: number;
  parse: number;
}

/** Tracks which round every watcher has seen. */
class Fanout {
  round = -1;
  seen = 0;
  firstAt = 0;
  lastAt = 0;
  /** Time spent parsing and matching events in this round (ms of this process's CPU). */
  busy = 0;
  #done?: () => void;

  onLine(line: string): void {
    const t0 = performance.now();
    this.#onEvent(JSON.parse(line) as WatchEvent);
    this.busy += performance.now() - t0;
  }

  #onEvent(e: WatchEvent): void {
    if (e.type !== 'MODIFIED' || e.object.metadata.labels?.[ROUND_LABEL] !== String(this.round)) return;
    const now = performance.now();
    if (++this.seen === 1) this.firstAt = now;
    if (this.seen === WATCHERS) {
      this.lastAt = now;
      this.#done?.();
    }
  }

  expect(round: number): Promise<void> {
    this.round = round;
    this.seen = 0;
    this.busy = 0;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`round ${round}: only ${this.seen}/${WATCHERS} watchers got the event in 10 s`)),
        10_000,
      );
      this.#done = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

async function openWatchers(config: ClientConfig, rv: string, fanout: Fanout): Promise<LineStream[]> {
  const agent = makeAgent(config);
  const streams: LineStream[] = [];
  for (let i = 0; i < WATCHERS; i += 100) {
    const batch = Array.from({ length: Math.min(100, WATCHERS - i) }, () =>
      openNdjson(config, agent, `${BASE}?watch=1&resourceVersion=${rv}`, (line) => fanout.onLine(line)),
    );
    streams.push(...(await Promise.all(batch)));
  }
  return streams;
}

async function measure(config: ClientConfig): Promise<Round[]> {
  const agent = makeAgent(config);
  const created = await requestJson(config, agent, 'POST', BASE, makeNodeObject(0, 'fanout'));
  if (created.status !== 201) throw new Error(`create: HTTP ${created.status} ${JSON.stringify(created.body)}`);
  const rv = (created.body as KubeObject).metadata.resourceVersion!;
  const fanout = new Fanout();
  const streams = await openWatchers(config, rv, fanout);
  const rounds: Round[] = [];
  try {
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      await sleep(50);
      const all = fanout.expect(r);
      const t0 = performance.now();
      const patch = { metadata: { labels: { [ROUND_LABEL]: String(r) } } };
      const res = await requestJson(
        config,
        agent,
        'PATCH',
        `${BASE}/fanout-00000`,
        patch,
        'application/merge-patch+json',
      );
      const tAck = performance.now();
      if (res.status !== 200) throw new Error(`patch: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      await all;
      if (r >= WARMUP_ROUNDS)
        rounds.push({
          first: fanout.firstAt - t0,
          last: fanout.lastAt - t0,
          lastAfterAck: fanout.lastAt - tAck,
          ack: tAck - t0,
          parse: fanout.busy,
        });
    }
  } finally {
    for (const s of streams) s.close();
    agent.destroy();
  }
  return rounds;
}

/** Starts the control plane, measures, stops it (by its PID, through the harness), renders the section. */
export async function watchFanoutSection(): Promise<string> {
  // One client opens all 1,000 watches: raise its per-client watch cap (100 by default) for this measurement.
  const cp = await spawnControlPlane({ insecure: true, args: ['--max-watches-per-client', '2000'] });
  let rounds: Round[];
  try {
    rounds = await measure(cp.config);
  } finally {
    await cp.stop();
  }
  return render(rounds, cp.url);
}

function render(rounds: Round[], url: string): string {
  const last = summarize(rounds.map((r) => r.last));
  const afterAck = summarize(rounds.map((r) => r.lastAfterAck));
  const first = summarize(rounds.map((r) => r.first));
  const ack = summarize(rounds.map((r) => r.ack));
  const parse = summarize(rounds.map((r) => r.parse));
  const limit = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  return [
    `## 2. Watch fan-out: one change to ${WATCHERS.toLocaleString('en-US')} watchers`,
    '',
    `The real \`mesh-control-plane\` (\`spawnControlPlane({ insecure: true })\` from test/harness.ts: its own process, run through tsx,`,
    `with its real store in a temp dir) serving **plain HTTP** on loopback (\`${url}\`, \`--insecure-http\`, so no TLS cost on either side).`,
    `This process opens ${WATCHERS.toLocaleString('en-US')} concurrent \`GET ${BASE}?watch=1\` connections (node:http, one socket each,`,
    "parsing the NDJSON stream line by line), then makes one change at a time — a JSON merge patch of one Node's label,",
    `${ROUNDS} times after ${WARMUP_ROUNDS} warm-up changes — and records when the last watcher parsed the MODIFIED event.`,
    `The watchers and the writer share this process's event loop (the server has its own). Open-file limit: ${limit}.`,
    '',
    '| time until … (ms) | p50 | p99 | max |',
    '|---|---|---|---|',
    `| the **last** of ${WATCHERS} watchers has the event, from just before the PATCH is sent | **${ms(last.p50)}** | ${ms(last.p99)} | ${ms(last.max)} |`,
    `| the last watcher has it, from the PATCH's acknowledgement (200 received) | ${ms(afterAck.p50)} | ${ms(afterAck.p99)} | ${ms(afterAck.max)} |`,
    `| the first watcher has it, from just before the PATCH | ${ms(first.p50)} | ${ms(first.p99)} | ${ms(first.max)} |`,
    `| the PATCH is acknowledged (durable) | ${ms(ack.p50)} | ${ms(ack.p99)} | ${ms(ack.max)} |`,
    `| (client side) CPU spent parsing and matching the ${WATCHERS} event lines, per change | ${ms(parse.p50)} | ${ms(parse.p99)} | ${ms(parse.max)} |`,
    '',
    `Target (issue 2): the last watcher within 30 ms (p50), measured from before the write: ${ms(last.p50)} ms — ${verdict(last.p50 <= 30)}.`,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  process.stdout.write((await watchFanoutSection()) + '\n');
}
