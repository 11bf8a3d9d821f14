import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type ClientRequest } from 'node:http';
import { openStream, type EventStream } from '../../../test/harness.ts';
import { eventually } from '../../../test/eventually.ts';
import { serverSuite } from '../../../test/server-suite.ts';
import { startServer } from '../../../test/harness.ts';
import { createInProcessClient } from '../in-process-transport.ts';

const NODE = { authorization: 'Bearer tok-a' };
const s = serverSuite({
  insecure: true,
  tokens: { 'tok-a': { kind: 'node', name: 'a' }, 'tok-b': { kind: 'node', name: 'b' } },
  authorize: () => undefined,
  // No wait queue: a request over the total is refused at once (the queue: below, and inflight-queue.test.ts).
  inflight: {
    maxRequestsInflight: 3,
    maxRequestsInflightPerClient: 2,
    maxWatchesPerClient: 2,
    maxRequestsQueued: 0,
    retryAfterSeconds: 2,
  },
});
const NODES = '/apis/meshctl.dev/v1alpha1/nodes';

/** A POST whose body never comes: it holds its in-flight slot until destroyed (the admin's, or `token`'s). */
function stalledPost(token = s.server.adminToken, url = s.server.url): ClientRequest {
  const u = new URL(NODES, url);
  const r = request({
    hostname: u.hostname,
    port: u.port,
    path: u.pathname,
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': 100,
    },
  });
  r.on('error', () => {});
  r.flushHeaders();
  return r;
}

test('requests over the in-flight cap get 429 with Retry-After; other clients are still served', async () => {
  const held = [stalledPost(), stalledPost()];
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 2, 'both held'));
  const refused = await s.server.request('GET', NODES);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers['retry-after'], '2');
  assert.equal(refused.json.kind, 'Status');
  assert.equal(refused.json.reason, 'TooManyRequests');
  assert.equal(refused.json.details.retryAfterSeconds, 2);
  assert.equal((await s.server.request('GET', NODES, undefined, NODE)).status, 200, 'the node is still served');
  assert.equal((await s.server.request('GET', '/healthz', undefined, { authorization: null })).status, 200);
  held[0].destroy();
  await eventually(async () => assert.equal((await s.server.request('GET', NODES)).status, 200, 'a slot again'));
  held[1].destroy();
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 0, 'all released'));
  assert.ok(s.server.app.stats().rejectedRequests >= 1);
});

test('watches over the per-client cap get 429 with Retry-After; other clients may still watch', async () => {
  const watch = `${NODES}?watch=1`;
  const open: EventStream[] = [await openStream(s.server.config, watch), await openStream(s.server.config, watch)];
  assert.deepEqual(
    open.map((w) => w.status),
    [200, 200],
  );
  const third = await s.server.request('GET', watch);
  assert.equal(third.status, 429);
  assert.equal(third.headers['retry-after'], '2');
  assert.equal(third.json.reason, 'TooManyRequests');
  const byNode = await openStream(s.server.config, watch, NODE);
  assert.equal(byNode.status, 200);
  assert.equal((await s.server.request('GET', NODES)).status, 200, 'watches do not count as requests in flight');
  open[0].close();
  const again = await eventually(async () => {
    const w = await openStream(s.server.config, watch);
    if (w.status !== 200) w.close();
    assert.equal(w.status, 200, 'a watch slot again');
    return w;
  });
  for (const w of [open[1], byNode, again]) w.close();
});

test("the admin's requests are not counted in the total nor refused by it (only per client), as system:masters", async () => {
  const held = [stalledPost('tok-a'), stalledPost('tok-a'), stalledPost('tok-b')];
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 3, 'the nodes hold all 3'));
  const node = await s.server.request('GET', NODES, undefined, { authorization: 'Bearer tok-b' });
  assert.equal(node.status, 429, 'a node is refused at the total');
  assert.equal((await s.server.request('GET', NODES)).status, 200, 'the admin is served');
  const admin = [stalledPost(), stalledPost()];
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 5, 'the admin holds 2 more'));
  assert.equal((await s.server.request('GET', NODES)).status, 429, 'the admin is still bounded per client');
  held[2].destroy();
  const again = async () => (await s.server.request('GET', NODES, undefined, { authorization: 'Bearer tok-b' })).status;
  await eventually(async () => assert.equal(await again(), 200, "the admin's requests took no node's slot"));
  for (const r of [...held, ...admin]) r.destroy();
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 0, 'all released'));
});

test("the control plane's own controllers (the admin, in process) are not refused by the admin's per-client bound", async () => {
  const admin = [stalledPost(), stalledPost()];
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 2, 'the admin holds its 2'));
  assert.equal((await s.server.request('GET', NODES)).status, 429, 'the admin over HTTP is bounded per client');
  // maxRetries 0: a 429 fails at once instead of being retried after its Retry-After.
  const own = createInProcessClient({ app: s.server.app, config: { token: s.server.adminToken, maxRetries: 0 } });
  const lists = await Promise.all([own.list('nodes'), own.list('nodes'), own.list('nodes')]);
  assert.deepEqual(
    lists.map((l) => l.kind),
    ['NodeList', 'NodeList', 'NodeList'],
    'served, with more in flight than the bound',
  );
  const intruder = createInProcessClient({ app: s.server.app, config: { token: 'tok-a', maxRetries: 0 } });
  admin.push(stalledPost('tok-a'), stalledPost('tok-a'));
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 4));
  await assert.rejects(intruder.list('nodes'), /429|TooManyRequests|too many/i, 'a node in process is still bounded');
  for (const r of admin) r.destroy();
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 0, 'all released'));
});

test('over the total, a request waits for a slot; over the queue or its wait, 429', async () => {
  const q = await startServer({
    insecure: true,
    tokens: { 'tok-a': { kind: 'node', name: 'a' }, 'tok-b': { kind: 'node', name: 'b' } },
    authorize: () => undefined,
    inflight: { maxRequestsInflight: 2, maxRequestsQueued: 1, maxQueueWaitMs: 60_000 },
  });
  try {
    const held = [stalledPost('tok-a', q.url), stalledPost('tok-a', q.url)];
    await eventually(async () => assert.equal(q.app.stats().requestsInflight, 2, 'both held'));
    const waiting = q.request('GET', NODES, undefined, { authorization: 'Bearer tok-b' });
    await eventually(async () => assert.equal(q.app.stats().requestsQueued, 1, 'the third waits'));
    const metrics = (await q.request('GET', '/metrics')).text;
    assert.match(metrics, /^meshctl_apiserver_current_inqueue_requests 1$/m, 'the admin reads the queue at once');
    const full = await q.request('GET', NODES, undefined, { authorization: 'Bearer tok-b' });
    assert.equal(full.status, 429, 'the queue is full');
    assert.match(full.json.message, /too many requests in flight/);
    held[0].destroy();
    assert.equal((await waiting).status, 200, 'served once a slot freed');
    assert.equal(q.app.stats().requestsQueued, 0);
    held[1].destroy();
    await eventually(async () => assert.equal(q.app.stats().requestsInflight, 0, 'all released'));
  } finally {
    await q.stop();
  }
});

test('a request that waited the longest wait for a slot gets 429 with Retry-After', async () => {
  const q = await startServer({
    insecure: true,
    tokens: { 'tok-a': { kind: 'node', name: 'a' } },
    authorize: () => undefined,
    inflight: { maxRequestsInflight: 1, maxQueueWaitMs: 200, retryAfterSeconds: 3 },
  });
  try {
    const held = stalledPost('tok-a', q.url);
    await eventually(async () => assert.equal(q.app.stats().requestsInflight, 1, 'held'));
    assert.equal((await q.request('GET', NODES)).status, 200, 'the admin does not wait: not counted in the total');
    const node = await q.request('GET', NODES, undefined, { authorization: 'Bearer tok-a' });
    assert.equal(node.status, 429);
    assert.equal(node.headers['retry-after'], '3');
    assert.match(node.json.message, /waited 200 ms/);
    assert.equal(q.app.stats().requestsQueued, 0);
    held.destroy();
    await eventually(async () => assert.equal(q.app.stats().requestsInflight, 0, 'released'));
  } finally {
    await q.stop();
  }
});
