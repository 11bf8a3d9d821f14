// Watch streams over the real server and store: replay, resume, 410, bookmarks, heartbeats, timeouts,
// selectors, Tables, cleanup, and fan-out to 1,000 watchers.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStream, startServer, type TestServer } from '../harness.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const MERGE = { 'content-type': 'application/merge-patch+json' };

function node(name: string, labels: Record<string, string> = {}): Record<string, unknown> {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name, labels }, spec: { site: 'home' } };
}

const summary = (e: { type: string; object: { metadata: { name?: string } } }): string =>
  `${e.type} ${e.object.metadata.name}`;

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}

let srv: TestServer;
before(async () => {
  srv = await startServer({ watchHeartbeatMs: 100 });
});
after(() => srv.stop());

test('a watch from resourceVersion 0 (or none) replays ADDED, then streams changes', async () => {
  for (const n of ['w0-b', 'w0-a'])
    assert.equal((await srv.request('POST', `${API}/nodes`, node(n, { grp: 'w0' }))).status, 201);
  for (const q of ['watch=1&resourceVersion=0', 'watch=true']) {
    const w = await openStream(srv.config, `${API}/nodes?${q}&labelSelector=grp%3Dw0`);
    try {
      assert.equal(w.status, 200);
      assert.equal(w.headers['content-type'], 'application/json');
      assert.equal(w.headers['transfer-encoding'], 'chunked');
      assert.deepEqual([summary(await w.next()), summary(await w.next())], ['ADDED w0-a', 'ADDED w0-b']);
    } finally {
      w.close();
    }
  }
  const w = await openStream(srv.config, `${API}/nodes?watch=1&resourceVersion=${srv.store.resourceVersion()}`);
  try {
    await srv.request('POST', `${API}/nodes`, node('w0-c'));
    const added = await w.next();
    assert.equal(summary(added), 'ADDED w0-c');
    await srv.request('PATCH', `${API}/nodes/w0-c`, { spec: { site: 'away' } }, MERGE);
    const mod = await w.next();
    assert.equal(summary(mod), 'MODIFIED w0-c');
    assert.equal(mod.object.spec.site, 'away');
    assert.ok(Number(mod.object.metadata.resourceVersion) > Number(added.object.metadata.resourceVersion));
    await srv.request('DELETE', `${API}/nodes/w0-c`);
    assert.equal(summary(await w.next()), 'DELETED w0-c');
  } finally {
    w.close();
  }
});

test('resuming from a resourceVersion delivers exactly the missed events', async () => {
  const first = (await srv.request('POST', `${API}/nodes`, node('rs-a'))).json;
  const from = first.metadata.resourceVersion;
  await srv.request('POST', `${API}/nodes`, node('rs-b'));
  await srv.request('PATCH', `${API}/nodes/rs-a`, { metadata: { labels: { n: '1' } } }, MERGE);
  await srv.request('DELETE', `${API}/nodes/rs-b`);
  const w = await openStream(srv.config, `${API}/nodes?watch=1&resourceVersion=${from}`);
  try {
    const got = [summary(await w.next()), summary(await w.next()), summary(await w.next())];
    assert.deepEqual(got, ['ADDED rs-b', 'MODIFIED rs-a', 'DELETED rs-b']);
    await assert.rejects(w.next(300), /no watch event/);
  } finally {
    w.close();
  }
});

test('a resourceVersion older than the event log: HTTP 200, one ERROR event with a 410 Status, end', async () => {
  const tiny = await startServer({ store: { eventLogCapacity: 3 } });
  try {
    const c = (await tiny.request('POST', `${API}/nodes`, node('old-a'))).json;
    for (let i = 0; i < 6; i++)
      await tiny.request('PATCH', `${API}/nodes/old-a`, { metadata: { labels: { i: String(i) } } }, MERGE);
    const w = await openStream(tiny.config, `${API}/nodes?watch=1&resourceVersion=${c.metadata.resourceVersion}`);
    assert.equal(w.status, 200);
    const e = await w.next();
    assert.equal(e.type, 'ERROR');
    assert.equal(e.object.kind, 'Status');
    assert.equal(e.object.code, 410);
    assert.equal(e.object.reason, 'Expired');
    assert.equal(await w.next(), undefined, 'the stream ends after the ERROR event');
  } finally {
    await tiny.stop();
  }
});

test('allowWatchBookmarks: BOOKMARK events carry the newest resourceVersion seen', async () => {
  const rv = srv.store.resourceVersion();
  const w = await openStream(srv.config, `${API}/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`);
  try {
    const t0 = Date.now();
    const b = await w.next(1000);
    assert.ok(Date.now() - t0 < 500);
    assert.deepEqual(b, {
      type: 'BOOKMARK',
      object: { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { resourceVersion: rv } },
    });
    const c = (await srv.request('POST', `${API}/nodes`, node('bm-a'))).json;
    let e = await w.next();
    while (e.type === 'BOOKMARK') e = await w.next();
    assert.equal(summary(e), 'ADDED bm-a');
    const b2 = await w.next(1000);
    assert.equal(b2.type, 'BOOKMARK');
    assert.equal(b2.object.metadata.resourceVersion, c.metadata.resourceVersion);
  } finally {
    w.close();
  }
});

test('omitStatusUpdates=true: no event for a status write, the spec change after it comes', async () => {
  const created = (await srv.request('POST', `${API}/nodes`, node('os-a'))).json;
  const from = `${API}/nodes?watch=1&fieldSelector=metadata.name%3Dos-a&resourceVersion=${created.metadata.resourceVersion}`;
  const plain = await openStream(srv.config, from);
  const omit = await openStream(srv.config, `${from}&omitStatusUpdates=true`);
  try {
    const status = await srv.request('PATCH', `${API}/nodes/os-a/status`, { status: { agentVersion: 'x' } }, MERGE);
    assert.equal(status.status, 200);
    const spec = (await srv.request('PATCH', `${API}/nodes/os-a`, { spec: { site: 'away' } }, MERGE)).json;
    const rv = (e: { object: { metadata: { resourceVersion?: string } } }) => e.object.metadata.resourceVersion;
    assert.equal(
      rv(await plain.next()),
      status.json.metadata.resourceVersion,
      'without it, the status write is an event',
    );
    assert.equal(rv(await plain.next()), spec.metadata.resourceVersion);
    const first = await omit.next();
    assert.equal(summary(first), 'MODIFIED os-a');
    assert.equal(rv(first), spec.metadata.resourceVersion, 'the first event is the spec change');
    assert.equal(first.object.status.agentVersion, 'x', 'carrying the status as stored');
  } finally {
    plain.close();
    omit.close();
  }
});

test('an idle watch gets heartbeat newlines; timeoutSeconds ends it cleanly', async () => {
  const w = await openStream(
    srv.config,
    `${API}/nodes?watch=1&resourceVersion=${srv.store.resourceVersion()}&timeoutSeconds=1`,
  );
  const t0 = Date.now();
  await w.ended;
  const took = Date.now() - t0;
  assert.ok(took >= 900 && took < 2000, `ended after ${took} ms`);
  assert.match(w.raw(), /^\n{5,}$/, 'only heartbeats, at least every 100 ms');
});

test('selectors apply to watches: leaving the selection is a DELETED event', async () => {
  const w = await openStream(srv.config, `${API}/nodes?watch=1&labelSelector=team%3Dblue`);
  try {
    await srv.request('POST', `${API}/nodes`, node('sw-red', { team: 'red' }));
    await srv.request('POST', `${API}/nodes`, node('sw-blue', { team: 'blue' }));
    assert.equal(summary(await w.next()), 'ADDED sw-blue');
    await srv.request('PATCH', `${API}/nodes/sw-red`, { metadata: { labels: { team: 'blue' } } }, MERGE);
    assert.equal(summary(await w.next()), 'ADDED sw-red');
    await srv.request('PATCH', `${API}/nodes/sw-blue`, { metadata: { labels: { team: 'green' } } }, MERGE);
    assert.equal(summary(await w.next()), 'DELETED sw-blue');
  } finally {
    w.close();
  }
  const byName = await openStream(srv.config, `${API}/watch/nodes/sw-red`);
  try {
    const e = await byName.next();
    assert.equal(summary(e), 'ADDED sw-red');
    await assert.rejects(byName.next(200));
  } finally {
    byName.close();
  }
});

test('Table watches (kubectl get -w) stream one-row Tables', async () => {
  const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
  const w = await openStream(srv.config, `${API}/nodes?watch=1&resourceVersion=${srv.store.resourceVersion()}`, {
    accept,
  });
  try {
    await srv.request('POST', `${API}/nodes`, node('tw-a'));
    const e = await w.next();
    assert.equal(e.type, 'ADDED');
    assert.equal(e.object.kind, 'Table');
    assert.equal(e.object.columnDefinitions[1].name, 'Site');
    assert.deepEqual(e.object.rows[0].cells.slice(0, 2), ['tw-a', 'home']);
    assert.equal(e.object.rows[0].object.metadata.name, 'tw-a');
  } finally {
    w.close();
  }
});

test('a client that goes away stops its store watch; closing the app ends open watches', async () => {
  const own = await startServer();
  const streams = await Promise.all([1, 2, 3].map(() => openStream(own.config, `${API}/nodes?watch=1`)));
  await until(() => own.store.stats().watchers === 3 && own.app.openWatches() === 3);
  for (const s of streams.slice(0, 2)) s.close();
  await until(() => own.store.stats().watchers === 1 && own.app.openWatches() === 1);
  await own.stop();
  await streams[2].ended;
  assert.equal(own.store.stats().watchers, 0);
});

// How fast is a benchmark's question (bench/watch-fanout.ts, figures in bench/RESULTS.md), not a test's.
test('one change reaches every one of 1,000 watchers', async () => {
  // One client opens all 1,000 watches: its per-client cap (100 by default) is raised for this test.
  const fan = await startServer({ insecure: true, inflight: { maxWatchesPerClient: 2000 } });
  try {
    await fan.request('POST', `${API}/nodes`, node('fan-a'));
    const rv = fan.store.resourceVersion();
    const streams = await Promise.all(
      Array.from({ length: 1000 }, () => openStream(fan.config, `${API}/nodes?watch=1&resourceVersion=${rv}`)),
    );
    await until(() => fan.store.stats().watchers === 1000, 10_000);
    const t0 = performance.now();
    const got = streams.map((s) => s.next(30_000).then(() => performance.now() - t0));
    const patched = fan.request('PATCH', `${API}/nodes/fan-a`, { metadata: { labels: { go: '1' } } }, MERGE);
    const times = (await Promise.all(got)).sort((a, b) => a - b);
    assert.equal(times.length, 1000);
    assert.equal((await patched).status, 200);
    const last = times[times.length - 1];
    console.log(
      `fan-out to 1000 watchers: first ${times[0].toFixed(1)} ms, last ${last.toFixed(1)} ms (including the durable write)`,
    );
    for (const s of streams) s.close();
  } finally {
    await fan.stop();
  }
});
