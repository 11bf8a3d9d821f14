import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { ApiError } from '../meta/api-error.ts';
import type { WatchEvent } from '../meta/types.ts';
import type { Node } from '../v1alpha1/generated/node.ts';
import { startServer, type TestServer } from '../../test/harness.ts';
import { createClient, isUnreachable, type HttpClient } from './http-client.ts';
import type { WatchStream } from './types.ts';

let server: TestServer;
let client: HttpClient;

before(async () => {
  server = await startServer({ store: { eventLogCapacity: 20 } });
  client = createClient(server.config);
});
after(async () => {
  client.close();
  await server.stop();
});

function node(name: string, site = 'home', labels: Record<string, string> = {}): Node {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name, labels }, spec: { site } };
}

async function rejects(p: Promise<unknown>, reason: string, code: number): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected ApiError, got ${String(e)}`);
    assert.equal(e.reason, reason, e.message);
    assert.equal(e.code, code);
    return e;
  }
  assert.fail(`expected ${reason}`);
}

/** Reads `n` events from a watch (failing after a few seconds). */
async function take(w: WatchStream, n: number): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  const it = w.events[Symbol.asyncIterator]();
  const timer = setTimeout(() => w.close(), 5000);
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value);
  }
  clearTimeout(timer);
  return out;
}

test('create, get, list with a label selector, update, status, merge patch and delete over HTTPS', async () => {
  const created = await client.create('nodes', node('c1', 'home', { role: 'web' }));
  assert.equal(created.metadata.generation, 1);
  await client.create('nodes', node('c2', 'office'));
  assert.equal((await client.get('nodes', 'c1')).metadata.uid, created.metadata.uid);
  assert.deepEqual(
    (await client.list('nodes', { labelSelector: 'role=web' })).items.map((o) => o.metadata.name),
    ['c1'],
  );
  const updated = await client.update('nodes', { ...created, spec: { site: 'lab' } });
  assert.equal((updated.spec as { site: string }).site, 'lab');
  const withStatus = await client.updateStatus('nodes', { ...updated, status: { agentVersion: '1.2.3' } });
  assert.equal((withStatus.status as { agentVersion: string }).agentVersion, '1.2.3');
  const patched = await client.patch('nodes', 'c1', {
    metadata: { labels: { role: null, tier: 'a' } },
    spec: { site: 'home' },
  });
  assert.deepEqual(patched.metadata.labels, { tier: 'a' });
  assert.equal((patched.spec as { site: string }).site, 'home');
  await client.delete('nodes', 'c1');
  await client.delete('nodes', 'c2');
  await rejects(client.get('nodes', 'c1'), 'NotFound', 404);
});

test('dry run validates and answers without persisting', async () => {
  const dry = await client.create('nodes', node('dry'), { dryRun: true });
  assert.equal(dry.metadata.name, 'dry');
  await rejects(client.get('nodes', 'dry'), 'NotFound', 404);
  await client.create('nodes', node('dry2'));
  await client.patch('nodes', 'dry2', { spec: { site: 'x' } }, { dryRun: true });
  await client.delete('nodes', 'dry2', { dryRun: true });
  assert.equal(((await client.get('nodes', 'dry2')).spec as { site: string }).site, 'home');
  await client.delete('nodes', 'dry2');
});

test('server errors arrive as ApiError with the Status reason, code and causes', async () => {
  await client.create('nodes', node('e1'));
  await rejects(client.create('nodes', node('e1')), 'AlreadyExists', 409);
  const live = await client.get('nodes', 'e1');
  await client.update('nodes', { ...live, spec: { site: 'a' } });
  await rejects(client.update('nodes', { ...live, spec: { site: 'b' } }), 'Conflict', 409);
  const invalid = await rejects(client.create('nodes', node('e2', 'NOT A LABEL')), 'Invalid', 422);
  assert.ok(
    invalid.details?.causes?.some((c) => c.field?.includes('spec.site')),
    JSON.stringify(invalid.details),
  );
  await rejects(client.list('nopes'), 'NotFound', 404);
  await client.delete('nodes', 'e1');
  const anonymous = createClient({ ...server.config, token: 'wrong' });
  await rejects(anonymous.list('nodes'), 'Unauthorized', 401);
  anonymous.close();
});

test('watch: replays ADDED, streams changes in order, and close() ends the events', async () => {
  await client.create('nodes', node('w1'));
  const w = await client.watch('nodes', { fieldSelector: 'metadata.name=w1' });
  const [added] = await take(w, 1);
  assert.equal(added.type, 'ADDED');
  await client.patch('nodes', 'w1', { spec: { site: 'lab' } });
  await client.delete('nodes', 'w1');
  const events = await take(w, 2);
  assert.deepEqual(
    events.map((e) => e.type),
    ['MODIFIED', 'DELETED'],
  );
  w.close();
  const after = await take(w, 1);
  assert.deepEqual(after, []);
});

test('watch resumes from a resourceVersion; one too old is an ERROR event with code 410', async () => {
  const first = await client.create('nodes', node('r1'));
  await client.patch('nodes', 'r1', { spec: { site: 'lab' } });
  const w = await client.watch('nodes', {
    resourceVersion: first.metadata.resourceVersion,
    fieldSelector: 'metadata.name=r1',
  });
  const [modified] = await take(w, 1);
  assert.equal(modified.type, 'MODIFIED');
  w.close();
  for (let i = 0; i < 30; i++) await client.patch('nodes', 'r1', { spec: { site: `s${i}` } });
  const old = await client.watch('nodes', { resourceVersion: first.metadata.resourceVersion });
  const [gone] = await take(old, 1);
  old.close();
  assert.equal(gone.type, 'ERROR');
  assert.equal((gone.object as unknown as { code: number }).code, 410);
  await client.delete('nodes', 'r1');
});

test('raw GET of discovery paths', async () => {
  const version = (await client.raw('/version')) as { meshctlVersion?: string };
  assert.ok(version.meshctlVersion);
});

test('a list of many objects (an answer of many TLS records) arrives whole, also when requests overlap', async () => {
  const names = Array.from({ length: 300 }, (_, i) => `bulk-${String(i).padStart(3, '0')}`);
  await Promise.all(names.map((n) => client.create('nodes', node(n, 'bulk', { bulk: 'yes' }))));
  const lists = await Promise.all([1, 2, 3].map(() => client.list('nodes', { labelSelector: 'bulk=yes' })));
  for (const l of lists) assert.deepEqual(l.items.map((o) => o.metadata.name).sort(), names);
  await Promise.all(names.map((n) => client.delete('nodes', n)));
});

test('plain HTTP works when the server serves it', async () => {
  const plain = await startServer({ insecure: true });
  const c = createClient(plain.config);
  try {
    assert.ok(plain.url.startsWith('http://'));
    assert.deepEqual((await c.list('nodes')).items, []);
  } finally {
    c.close();
    await plain.stop();
  }
});

test('an unreachable control plane is ServiceUnavailable naming the server and the socket error', async () => {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  const c = createClient({ ...server.config, server: `https://127.0.0.1:${port}` });
  const e = await rejects(c.list('nodes'), 'ServiceUnavailable', 503);
  assert.equal(
    e.message,
    `the control plane at https://127.0.0.1:${port} is unreachable (connect ECONNREFUSED 127.0.0.1:${port})`,
  );
  assert.ok(isUnreachable(e));
  c.close();
});

test('a server whose certificate does not verify against the configured CA is refused', async () => {
  const other = await startServer();
  const c = createClient({ ...server.config, server: other.url });
  try {
    const e = await rejects(c.list('nodes'), 'ServiceUnavailable', 503);
    assert.match(
      e.message,
      /^the control plane at https:\/\/127\.0\.0\.1:\d+ is unreachable: its certificate did not verify against the configured CA \(/,
    );
    assert.ok(isUnreachable(e));
  } finally {
    c.close();
    await other.stop();
  }
});

test('a server that never answers times out as unreachable', async () => {
  const sockets: Socket[] = [];
  const silent: Server = createServer((s) => void sockets.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as { port: number }).port;
  const c = createClient({ server: `http://127.0.0.1:${port}`, timeoutMs: 200 });
  try {
    const e = await rejects(c.list('nodes'), 'ServiceUnavailable', 503);
    assert.match(e.message, /is unreachable \(no answer within 0\.2s\)/);
  } finally {
    c.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  }
});

test('a watch opened first with a local socket that is gone goes to the server URL, and so do later requests', async () => {
  const viaGone = createClient({ ...server.config, socketPath: '/nonexistent-meshctl-dir/api.sock' });
  try {
    await client.create('nodes', node('gone-socket'));
    const w = await viaGone.watch('nodes', { fieldSelector: 'metadata.name=gone-socket' });
    const [ev] = await take(w, 1);
    assert.equal(ev.type, 'ADDED');
    w.close();
    assert.equal((await viaGone.get('nodes', 'gone-socket')).metadata.name, 'gone-socket');
  } finally {
    viaGone.close();
    await client.delete('nodes', 'gone-socket');
  }
});
