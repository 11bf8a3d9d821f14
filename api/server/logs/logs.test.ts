import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpRequest } from '../../../test/harness.ts';
import type { ClientConfig } from '../../client/types.ts';
import { openStore } from '../../store/index.ts';
import { createApp, type App } from '../app.ts';
import { bearerAuthenticator, hashToken } from '../access/auth.ts';
import { listen } from '../listen.ts';
import { LogFiles, MAX_SERVICES_PER_NODE } from './log-files.ts';
import { logsPath } from '../../wire/log-wire.ts';
import { nodeAuthorizer } from '../access/node-authorizer.ts';

interface Server {
  admin: ClientConfig;
  nodeA: ClientConfig;
  dataDir: string;
  app: App;
}

/** The real app and store on port 0 (plain HTTP), with logs under `<dataDir>/logs`; nodes `a` and `b` exist. */
async function serve(t: TestContext): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-logs-'));
  const store = await openStore({ dir: join(dataDir, 'store') });
  for (const name of ['a', 'b'])
    await store.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name }, spec: {} });
  const app = createApp({
    store,
    logsDir: join(dataDir, 'logs'),
    authorize: nodeAuthorizer,
    authenticate: bearerAuthenticator({
      adminTokenSha256: hashToken('admin'),
      resolve: (h) => (h === hashToken('node-a') ? { kind: 'node', name: 'a' } : undefined),
    }),
  });
  const server = await listen({ app, host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await server.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    admin: { server: server.url, token: 'admin' },
    nodeA: { server: server.url, token: 'node-a' },
    dataDir,
    app,
  };
}

const line = (seq: number, text = `line ${seq}`, service = 'web-on-a/server') => ({
  seq,
  service,
  time: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z`,
  line: text,
});
const post = (cfg: ClientConfig, node: string, body: unknown) => httpRequest(cfg, 'POST', logsPath(node), body);
const get = (cfg: ClientConfig, node: string, query = '') => httpRequest(cfg, 'GET', `${logsPath(node)}${query}`);

test('a node posts its lines; the admin lists services and reads a log, whole, tailed, with or without time stamps', async (t) => {
  const s = await serve(t);
  const r = await post(s.nodeA, 'a', {
    stream: 's1',
    entries: [line(1), line(2), line(3), line(4, 'db up', 'db-on-a/main')],
  });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { accepted: 4, duplicates: 0 });

  const list = await get(s.admin, 'a');
  assert.equal(list.json.kind, 'ServiceLogList');
  assert.deepEqual(
    list.json.items.map((i: { service: string }) => i.service),
    ['db-on-a/main', 'web-on-a/server'],
  );

  const all = await get(s.admin, 'a', '?service=web-on-a%2Fserver');
  assert.equal(all.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(all.text, 'line 1\nline 2\nline 3\n');
  assert.equal((await get(s.admin, 'a', '?service=web-on-a/server&tailLines=2')).text, 'line 2\nline 3\n');
  assert.equal(
    (await get(s.admin, 'a', '?service=web-on-a/server&tailLines=1&timestamps=true')).text,
    '2026-01-01T00:00:03Z line 3\n',
  );
  assert.equal(
    readFileSync(join(s.dataDir, 'logs', 'a', 'web-on-a%2Fserver.log'), 'utf8'),
    '2026-01-01T00:00:01Z line 1\n2026-01-01T00:00:02Z line 2\n2026-01-01T00:00:03Z line 3\n',
    'plain text lines under DIR/logs/<node>/',
  );
});

test('a batch sent again (its reply was lost) is stored once; a new stream starts over', async (t) => {
  const s = await serve(t);
  await post(s.nodeA, 'a', { stream: 's1', entries: [line(1), line(2)] });
  const again = await post(s.nodeA, 'a', { stream: 's1', entries: [line(2), line(3)] });
  assert.deepEqual(again.json, { accepted: 1, duplicates: 1 });
  const fresh = await post(s.nodeA, 'a', { stream: 's2', entries: [line(1, 'after a new buffer')] });
  assert.deepEqual(fresh.json, { accepted: 1, duplicates: 0 });
  assert.equal(
    (await get(s.admin, 'a', '?service=web-on-a/server')).text,
    'line 1\nline 2\nline 3\nafter a new buffer\n',
  );
});

test('drops a node reports are marked in the service log where they happened', async (t) => {
  const s = await serve(t);
  await post(s.nodeA, 'a', { stream: 's1', entries: [line(1)] });
  await post(s.nodeA, 'a', {
    stream: 's1',
    entries: [line(9)],
    dropped: [{ service: 'web-on-a/server', lines: 7, bytes: 56 }],
  });
  const text = (await get(s.admin, 'a', '?service=web-on-a/server')).text.split('\n');
  assert.equal(text[0], 'line 1');
  assert.match(text[1], /^\[meshctl\] the node dropped 7 line\(s\) \(56 bytes\) of this log here/);
  assert.equal(text[2], 'line 9');
});

test('authorization: a node posts only its own logs and reads none; unknown nodes are 404, bad input 400', async (t) => {
  const s = await serve(t);
  const other = await post(s.nodeA, 'b', { entries: [line(1)] });
  assert.equal(other.status, 403);
  assert.equal(other.json.kind, 'Status');
  assert.match(
    other.json.message,
    /nodes\.meshctl\.dev "b" is forbidden: User "system:node:a" cannot create resource "nodes\/logs"/,
  );
  assert.equal((await get(s.nodeA, 'a')).status, 403, 'reading logs is for the admin');
  assert.equal((await httpRequest({ ...s.admin, token: 'nobody' }, 'GET', logsPath('a'))).status, 401);

  const missing = await get(s.admin, 'zz');
  assert.equal(missing.status, 404);
  assert.equal(missing.json.message, 'nodes.meshctl.dev "zz" not found');
  assert.equal((await get(s.admin, 'a', '?service=nothing')).status, 404);
  for (const q of ['?service=x&tailLines=-1', '?service=x&tailLines=ten', '?service=x&follow=maybe', '?service=%01']) {
    const r = await get(s.admin, 'a', q);
    assert.equal(r.status, 400, `${q}: ${r.text}`);
    assert.equal(r.json.reason, 'BadRequest');
  }
  const bodies: unknown[] = [
    { entries: [{ ...line(1), line: 'two\nlines' }] },
    { entries: [line(2), line(1)] },
    { entries: [{ ...line(1), time: 'yesterday' }] },
    { entries: 'lines' },
  ];
  for (const body of bodies) assert.equal((await post(s.nodeA, 'a', body)).status, 400, JSON.stringify(body));
  assert.equal((await httpRequest(s.admin, 'PUT', logsPath('a'), {})).status, 405);
});

test('service names cannot leave the node directory', async (t) => {
  const s = await serve(t);
  const evil = ['../../../../tmp/owned', '..', '.', 'a/../../b', '/etc/passwd'];
  const r = await post(s.nodeA, 'a', { entries: evil.map((service, i) => line(i + 1, 'x', service)) });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(readdirSync(join(s.dataDir, 'logs')), ['a']);
  assert.ok(readdirSync(join(s.dataDir, 'logs', 'a')).every((n) => /^[A-Za-z0-9_%-]+\.log$/.test(n)));
  assert.equal(existsSync(join(s.dataDir, 'tmp')), false);
  const list = await get(s.admin, 'a');
  assert.deepEqual(list.json.items.map((i: { service: string }) => i.service).sort(), [...evil].sort());
  assert.equal((await get(s.admin, 'a', `?service=${encodeURIComponent('../../../../tmp/owned')}`)).text, 'x\n');
});

test('a node keeps logs of at most MAX_SERVICES_PER_NODE services: a POST naming more is refused whole, 403', async (t) => {
  const s = await serve(t);
  const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const at = (seq: number, text: string, service: string) => ({ ...line(1, text, service), seq });
  const invented = await post(s.nodeA, 'a', { entries: names(1000, 'x').map((svc, i) => at(i + 1, 'x', svc)) });
  assert.equal(invented.status, 403, invented.text);
  assert.match(
    invented.json.message,
    /node "a" may keep logs of at most 64 services; it has 0 and this request names 1000 more/,
  );
  assert.equal(existsSync(join(s.dataDir, 'logs', 'a')), false);
  const full = names(MAX_SERVICES_PER_NODE, 'svc');
  assert.equal((await post(s.nodeA, 'a', { entries: full.map((svc, i) => at(i + 1, 'x', svc)) })).status, 200);
  const more = await post(s.nodeA, 'a', { entries: [at(65, 'y', 'svc-0'), at(66, 'y', 'one-more')] });
  assert.equal(more.status, 403, more.text);
  assert.equal(more.json.reason, 'Forbidden');
  assert.equal((await post(s.nodeA, 'a', { entries: [at(67, 'z', 'svc-0')] })).status, 200);
  assert.equal(readdirSync(join(s.dataDir, 'logs', 'a')).filter((n) => n.endsWith('.log')).length, 64);
  assert.equal((await get(s.admin, 'a', '?service=svc-0')).text, 'x\nz\n');
});

test('follow: the last lines, then every new line as it arrives, until the client goes', async (t) => {
  const s = await serve(t);
  await post(s.nodeA, 'a', { stream: 's1', entries: [line(1), line(2)] });
  let got = '';
  const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
    const req = request(
      `${s.admin.server}${logsPath('a')}?service=web-on-a/server&follow=true&tailLines=1`,
      { headers: { authorization: 'Bearer admin' } },
      resolve,
    );
    req.on('error', reject).end();
  });
  res.setEncoding('utf8').on('data', (d: string) => {
    got += d;
  });
  const until = async (want: string): Promise<void> => {
    for (let i = 0; i < 200 && got !== want; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(got, want);
  };
  await until('line 2\n');
  await post(s.nodeA, 'a', { stream: 's1', entries: [line(3), line(4, 'other service', 'db-on-a/main'), line(5)] });
  await until('line 2\nline 3\nline 5\n');
  assert.equal(s.app.openWatches(), 1);
  res.destroy();
  for (let i = 0; i < 100 && s.app.openWatches() > 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(s.app.openWatches(), 0, 'the follower is gone with its client');
});

test('a file passing the size cap is rotated to .1; tails reach into it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-logfiles-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const files = new LogFiles({ dir, maxFileBytes: 100 });
  for (let i = 1; i <= 12; i++) await files.append('a', { entries: [line(i)] });
  const path = files.path('a', 'web-on-a/server');
  assert.ok(readFileSync(path).length <= 100);
  assert.ok(existsSync(`${path}.1`));
  const kept = (await files.read('a', 'web-on-a/server'))
    .trim()
    .split('\n')
    .map((l) => Number(l.split(' ').pop()));
  assert.deepEqual(
    kept,
    Array.from({ length: kept.length }, (_, i) => 13 - kept.length + i),
    'the newest lines, in order',
  );
  const tail = await files.read('a', 'web-on-a/server', kept.length - 1);
  assert.equal(tail.trim().split('\n').length, kept.length - 1);
  assert.equal(tail.trim().split('\n').pop(), '2026-01-01T00:00:12Z line 12');
});
