// The control plane's /metrics: each limit that refuses a request is counted under its reason (one of each
// is triggered here, over the real server), and the gauges show requests in flight and open watches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request, type ClientRequest } from 'node:http';
import { FakeClock } from '../../meta/fake-clock.ts';
import { openStream, startServer, type HttpResult, type TestServer } from '../../../test/harness.ts';
import { eventually } from '../../../test/eventually.ts';
import { newNodeKey, postJoin } from '../../../test/e2e/join-helpers.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const NODE = { authorization: 'Bearer tok-a' };
const one = { perMinute: 1, burst: 1 };

/** The value of one sample (`name{labels}`) in an exposition text, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
const rejected = (text: string, code: number, reason: string): number | undefined =>
  sample(text, `meshctl_apiserver_rejected_requests_total{code="${code}",reason="${reason}"}`);

/** A POST whose body never comes: it holds its in-flight slot until destroyed. */
function stalledPost(srv: TestServer): ClientRequest {
  const u = new URL(`${API}/nodes`, srv.url);
  const headers = {
    authorization: `Bearer ${srv.adminToken}`,
    'content-type': 'application/json',
    'content-length': 100,
  };
  const r = request({ hostname: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers });
  r.on('error', () => {});
  r.flushHeaders();
  return r;
}

const event = (name: string) => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Event',
  metadata: { name },
  involvedObject: { kind: 'Node', name: 'a' },
  type: 'Normal',
  reason: 'Tested',
});

/** Makes each limit refuse one request; returns the answers by limit. */
async function triggerEach(srv: TestServer): Promise<Record<string, HttpResult>> {
  const got: Record<string, HttpResult> = {};
  const held = stalledPost(srv);
  await eventually(async () => assert.equal(srv.app.stats().requestsInflight, 1, 'the stalled POST holds a slot'));
  got.inflight = await srv.request('GET', `${API}/nodes`);
  held.destroy();
  await eventually(async () => assert.equal(srv.app.stats().requestsInflight, 0, 'the slot is released'));
  const watch = await openStream(srv.config, `${API}/nodes?watch=1`);
  got.watches_per_client = await srv.request('GET', `${API}/nodes?watch=1`);
  watch.close();
  for (const name of ['e1', 'e2']) got.event_quota = await srv.request('POST', `${API}/events`, event(name), NODE);
  for (let i = 0; i < 2; i++)
    got.join_rate = await postJoin(srv.config, {
      token: 'abcdef.0123456789abcdef',
      nodeName: 'n',
      nodeKey: newNodeKey(),
    });
  got.list_bytes = await srv.request('GET', `${API}/nodes`); // the budget is 0: nothing new may be serialized
  got.body_size = await srv.request('POST', `${API}/nodes`, { metadata: { name: 'x'.repeat(5000) } });
  got.parser_depth = await srv.request('POST', `${API}/nodes`, JSON.parse('['.repeat(150) + ']'.repeat(150)));
  const bomb = 'a: &a [x, x]\n' + Array.from({ length: 60 }, (_, i) => `k${i}: *a`).join('\n');
  got.parser_aliases = await srv.request('POST', `${API}/nodes`, bomb, { 'content-type': 'application/yaml' });
  return got;
}

test('each limit that refuses a request is counted under its reason; gauges show what is in flight', async (t) => {
  const srv = await startServer({
    insecure: true,
    meshAccess: true,
    clock: new FakeClock(),
    tokens: { 'tok-a': { kind: 'node', name: 'a' } },
    inflight: { maxRequestsInflightPerClient: 1, maxWatchesPerClient: 1 },
    eventLimits: { ...one, maxStored: 10 },
    joinRate: { perAddress: one, overall: { perMinute: 100, burst: 100 } },
    maxBodyBytes: 4096,
    maxListBytes: 0,
  });
  t.after(() => srv.stop());
  await srv.store.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'a' } });
  const before = (await srv.request('GET', '/metrics')).text;
  assert.equal(rejected(before, 429, 'inflight'), 0, `every reason is reported from the start:\n${before}`);
  const got = await triggerEach(srv);
  const codes: Record<string, number> = { body_size: 413, parser_depth: 400, parser_aliases: 400 };
  for (const [limit, answer] of Object.entries(got))
    assert.equal(answer.status, codes[limit] ?? 429, `${limit}: ${answer.text}`);
  const text = (await srv.request('GET', '/metrics')).text;
  for (const limit of Object.keys(got))
    assert.equal(rejected(text, codes[limit] ?? 429, limit), 1, `${limit} counted once:\n${text}`);
  assert.match(text, /^# TYPE meshctl_apiserver_rejected_requests_total counter$/m);
  assert.equal(sample(text, 'meshctl_apiserver_current_inflight_requests'), 0);
  assert.equal(sample(text, 'meshctl_apiserver_current_inqueue_requests'), 0);
  const watch = await openStream(srv.config, `${API}/nodes?watch=1`);
  const during = (await srv.request('GET', '/metrics')).text;
  watch.close();
  assert.equal(sample(during, 'meshctl_apiserver_open_watches'), 1, during);
  const byNode = await srv.request('GET', '/metrics', undefined, NODE);
  assert.equal(byNode.status, 403, 'only the admin reads the metrics');
  assert.equal((await srv.request('GET', '/healthz')).status, 200, 'the server is alive and serving');
});

test('requests are counted by caller kind, method and what they address', async (t) => {
  const srv = await startServer({ insecure: true, meshAccess: true, tokens: { 'tok-a': { kind: 'node', name: 'a' } } });
  t.after(() => srv.stop());
  await srv.store.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'a' } });
  const count = (text: string, labels: string): number =>
    sample(text, `meshctl_apiserver_requests_total{${labels}}`) ?? 0;
  const before = (await srv.request('GET', '/metrics')).text;
  await srv.request('GET', `${API}/nodes`);
  await srv.request('GET', `${API}/nodes`);
  const patch = { status: { agentVersion: 'v' } };
  const patched = await srv.request('PATCH', `${API}/nodes/a/status`, patch, {
    ...NODE,
    'content-type': 'application/merge-patch+json',
  });
  assert.equal(patched.status, 200, patched.text);
  await srv.request('GET', `${API}/no-such-things/x`);
  const text = (await srv.request('GET', '/metrics')).text;
  const diff = (labels: string): number => count(text, labels) - count(before, labels);
  assert.equal(diff('client="admin",verb="GET",resource="nodes"'), 2, text);
  assert.equal(diff('client="node",verb="PATCH",resource="nodes/status"'), 1, text);
  assert.equal(diff('client="admin",verb="GET",resource="unknown"'), 1, 'a path we do not serve is not a label value');
  assert.match(text, /^# TYPE meshctl_apiserver_requests_total counter$/m);
});

test('the process gauges are served as prom-client names them, and follow what the process holds', async (t) => {
  const srv = await startServer({ insecure: true, meshAccess: true });
  t.after(() => srv.stop());
  const before = (await srv.request('GET', '/metrics')).text;
  for (const name of [
    'process_resident_memory_bytes',
    'nodejs_heap_size_total_bytes',
    'nodejs_heap_size_used_bytes',
    'nodejs_external_memory_bytes',
    'nodejs_array_buffers_bytes',
  ])
    assert.match(before, new RegExp(`^# TYPE ${name} gauge$`, 'm'), `${name} is a gauge:\n${before}`);
  assert.match(before, /^# TYPE process_cpu_seconds_total counter$/m);
  assert.ok((sample(before, 'nodejs_heap_space_size_used_bytes{space="old"}') ?? 0) > 0, before);
  // The server runs in this test's process: its RSS is this process's, as the kernel counts it.
  const vmRss = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024;
  const rss = sample(before, 'process_resident_memory_bytes') ?? NaN;
  assert.ok(Math.abs(rss - vmRss) < vmRss / 4, `RSS ${rss} is the kernel's ${vmRss}`);
  const used = sample(before, 'nodejs_heap_size_used_bytes') ?? NaN;
  assert.ok(used > 0 && used <= (sample(before, 'nodejs_heap_size_total_bytes') ?? 0), `heap used ${used}`);
  const held = Buffer.alloc(64 << 20, 1); // 64 MiB outside the V8 heap, held until the second scrape
  const after = (await srv.request('GET', '/metrics')).text;
  for (const name of ['nodejs_external_memory_bytes', 'nodejs_array_buffers_bytes'])
    assert.ok(
      (sample(after, name) ?? 0) - (sample(before, name) ?? 0) >= held.length * 0.9,
      `${name} counts the held 64 MiB:\n${after}`,
    );
  assert.ok((sample(after, 'process_cpu_seconds_total') ?? 0) >= (sample(before, 'process_cpu_seconds_total') ?? 1));
});
