// The control plane's controllers reach its API in process (in-process-transport.ts), through the same handler as
// every HTTPS client: their writes are authenticated, validated and admitted; their watches see every write, also
// those made over HTTPS; a closed watch and every finished request give back what they held (watch and in-flight
// counts); a wrong token is refused. Real server and store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from '../client/http-client.ts';
import { ApiError } from '../meta/api-error.ts';
import { deepFreeze } from '../meta/frozen.ts';
import type { Module } from '../v1alpha1/generated/module.ts';
import { startServer } from '../../test/harness.ts';
import { eventually } from '../../test/eventually.ts';
import { createInProcessClient } from './in-process-transport.ts';

const module = (name: string, version: string): Module => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Module',
  metadata: { name },
  spec: { version, resources: [{ id: 'f', kind: 'File', spec: { path: '/srv/f', content: version } }] },
});

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const srv = await startServer();
  const inProc = createInProcessClient({ app: srv.app, config: { token: srv.adminToken } });
  const https = createClient(srv.config);
  t.after(async () => {
    https.close();
    await srv.stop();
  });
  return { srv, inProc, https };
}

test('writes in process are stored, and refused as over HTTPS when invalid or not admitted', async (t) => {
  const { srv, inProc, https } = await setup(t);
  const created = await inProc.create('modules', module('m', '1.0.0'));
  assert.equal(created.metadata.generation, 1);
  assert.equal((await https.get('modules', 'm')).spec.version, '1.0.0', 'an HTTPS client reads it');
  const bad: Module = JSON.parse(
    '{"kind":"Module","apiVersion":"meshctl.dev/v1alpha1","metadata":{"name":"bad"},"spec":{"version":1}}',
  );
  const invalid = await inProc.create('modules', bad).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(invalid instanceof ApiError, String(invalid));
  assert.equal(invalid.reason, 'Invalid', invalid.message);
  assert.equal(await srv.store.get('modules', 'bad'), undefined, 'nothing of it is stored');
  await inProc.update('modules', { ...created, spec: module('m', '2').spec });
  const conflict = await inProc.update('modules', created).catch((e: unknown) => e);
  assert.ok(conflict instanceof ApiError && conflict.reason === 'Conflict', String(conflict));
  const patched = await inProc.patch('modules', 'm', { metadata: { labels: { a: 'b' } } });
  assert.equal(patched.metadata.labels?.a, 'b', 'a merge patch applies');
  assert.equal(srv.app.stats().requestsInflight, 0, 'every finished request gave back its in-flight slot');
});

test('a wrong token is refused in process as over HTTPS', async (t) => {
  const { srv } = await setup(t);
  const intruder = createInProcessClient({ app: srv.app, config: { token: 'not-the-admin' } });
  const e = await intruder.list('modules').catch((err: unknown) => err);
  assert.ok(e instanceof ApiError && e.code === 401, String(e));
});

test('a watch in process sees writes made over HTTPS, and closing it ends it on the server', async (t) => {
  const { srv, inProc, https } = await setup(t);
  const rv = (await inProc.list('modules')).metadata.resourceVersion;
  const watch = await inProc.watch('modules', { resourceVersion: rv });
  assert.equal(srv.app.openWatches(), 1);
  const seen: string[] = [];
  const pump = (async () => {
    for await (const ev of watch.events) seen.push(`${ev.type} ${ev.object.metadata.name}`);
  })();
  await https.create('modules', module('w', '1.0.0'));
  await https.delete('modules', 'w');
  await eventually(async () => assert.deepEqual(seen, ['ADDED w', 'DELETED w'], 'the events arrive in order'));
  watch.close();
  await pump;
  await eventually(async () => assert.equal(srv.app.openWatches(), 0, 'the server ended the watch'));
  assert.equal(srv.app.stats().requestsInflight, 0);
});

test('a request the handler hangs up on without answering fails as an unreachable server does', async () => {
  // Not the API's behaviour (its handler always answers) but the transport's, so a stand-in handler that hangs up.
  const client = createInProcessClient({ app: { handle: (_req, res) => void res.destroy() }, config: {} });
  const e = await client.get('modules', 'm').catch((err: unknown) => err);
  assert.ok(e instanceof ApiError && e.reason === 'ServiceUnavailable', String(e));
});

test('in process, an answer and a watch event are the object as stored, frozen, not JSON decoded again', async (t) => {
  const { srv, inProc, https } = await setup(t);
  const rv = (await inProc.list('modules')).metadata.resourceVersion;
  const watch = await inProc.watch('modules', { resourceVersion: rv });
  const events = watch.events[Symbol.asyncIterator]();
  const created = await inProc.create('modules', module('v', '1.0.0'));
  const stored = await srv.store.get('modules', 'v');
  assert.equal(created, stored, 'the answer is the store’s object itself');
  const ev = (await events.next()).value;
  assert.equal(ev?.type, 'ADDED');
  assert.equal(ev?.object, stored, 'the event carries the store’s object itself');
  assert.ok(Object.isFrozen(created) && Object.isFrozen(created.spec.resources[0]?.spec), 'frozen all the way down');
  assert.throws(() => {
    created.metadata.labels = { changed: 'yes' };
  }, TypeError);
  const overHttps = await https.get('modules', 'v');
  assert.deepEqual(overHttps, JSON.parse(JSON.stringify(stored)), 'over HTTPS the same object, as JSON');
  assert.equal(overHttps.metadata.labels, undefined, 'nobody changed the stored object');
  // An error answer is still a Status, decoded to an ApiError.
  const gone = await inProc.get('modules', 'nope').catch((e: unknown) => e);
  assert.ok(gone instanceof ApiError && gone.code === 404, String(gone));
  watch.close();
});

test('the requests of one in-process client name one connection, so the server hashes its token once', async () => {
  // The transport's own behaviour, so a stand-in handler that records each request's socket.
  const sockets: unknown[] = [];
  const handle = (req: { socket: unknown }, res: { writeHead(c: number): void; end(b: string): void }): void => {
    sockets.push(req.socket);
    res.writeHead(200);
    res.end('{"kind":"Module","apiVersion":"meshctl.dev/v1alpha1","metadata":{"name":"m"}}');
  };
  const client = createInProcessClient({ app: { handle }, config: { token: 't' } });
  await client.get('modules', 'm');
  await client.get('modules', 'm');
  assert.equal(sockets.length, 2);
  assert.ok(sockets[0] && sockets[0] === sockets[1], 'both requests came on the same socket');
});

test('a JSON body handed over in process is the handler’s copy: as parsed from its text, the sender’s left alone', async (t) => {
  const { srv, inProc } = await setup(t);
  // What a controller sends: built from frozen cached parts, with fields JSON leaves out or changes.
  const sent = deepFreeze({
    ...module('m', '1.0.0'),
    metadata: { name: 'm', namespace: 'ignored', labels: {}, annotations: { kept: 'x' } },
    spec: { ...module('m', '1.0.0').spec, description: undefined },
  });
  const before = JSON.stringify(sent);
  const created = await inProc.create('modules', sent);
  assert.equal(JSON.stringify(sent), before, 'the sender’s object is unchanged');
  const stored = await srv.store.get('modules', 'm');
  assert.deepEqual(stored?.metadata.annotations, { kept: 'x' });
  assert.equal(stored?.metadata.namespace, undefined, 'the handler dropped the namespace from its copy');
  assert.equal(stored?.metadata.labels, undefined, 'and the empty labels');
  assert.equal(created.metadata.uid, stored?.metadata.uid);
  // A merge patch travels the same way.
  await inProc.patch('modules', 'm', deepFreeze({ metadata: { labels: { a: 'b', c: null } } }));
  assert.deepEqual((await srv.store.get('modules', 'm'))?.metadata.labels, { a: 'b' });
});
