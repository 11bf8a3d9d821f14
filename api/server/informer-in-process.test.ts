// The informer's cache against the real API server and store (test/harness.ts): over the in-process transport (the
// control plane's controllers) it keeps the store's own objects — one copy per object in the process, not two —
// through the first list, updates and a delete; over HTTPS its decoded copies are frozen too, so a handler cannot
// change what the other handlers see.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../test/harness.ts';
import type { KubeObject } from '../meta/types.ts';
import { silentLogger } from '../meta/logger.ts';
import { createClient } from '../client/http-client.ts';
import { createInformer } from '../client/informer.ts';
import { createInProcessClient } from './in-process-transport.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const node = (name: string): KubeObject => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name, labels: { site: 'home' } },
  spec: { site: 'home' },
});

async function until(what: string, cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function serverWithNodes(...names: string[]) {
  const srv = await startServer();
  cleanups.push(() => srv.stop());
  for (const n of names) {
    const r = await srv.request('POST', `${API}/nodes`, node(n));
    assert.equal(r.status, 201, r.text);
  }
  const client = createClient(srv.config);
  cleanups.push(() => client.close());
  return { srv, client };
}

test('in process, the cache holds the store objects: listed, updated, and a deleted one is dropped', async () => {
  const { srv } = await serverWithNodes('a', 'b');
  const client = createInProcessClient({ app: srv.app, config: { token: srv.adminToken } });
  cleanups.push(() => client.close());
  const seen: Array<[string, KubeObject]> = [];
  const inf = createInformer({
    client,
    plural: 'nodes',
    logger: silentLogger,
    onEvent: (type, obj) => void seen.push([type, obj]),
  });
  cleanups.push(() => inf.stop());
  inf.start();
  assert.equal(await inf.waitForSync(), true);
  assert.equal(inf.get('a'), srv.store.get('nodes', 'a'), 'listed: the store object itself');
  assert.equal(inf.get('b'), srv.store.get('nodes', 'b'), 'listed: the store object itself');
  const r = await srv.request('PATCH', `${API}/nodes/a`, { spec: { site: 'away' } }, MERGE);
  assert.equal(r.status, 200, r.text);
  await until('the update cached', () => (inf.get('a')?.spec as { site?: string }).site === 'away');
  assert.equal(inf.get('a'), srv.store.get('nodes', 'a'), 'updated: the store object itself');
  assert.equal(seen.at(-1)?.[1], srv.store.get('nodes', 'a'), 'the handler got the store object too');
  assert.throws(() => {
    (inf.get('a')?.metadata.labels as Record<string, string>).site = 'x';
  }, TypeError);
  assert.equal(srv.store.get('nodes', 'a')?.metadata.labels?.site, 'home', 'the store object is unchanged');
  const d = await srv.request('DELETE', `${API}/nodes/b`);
  assert.equal(d.status, 200, d.text);
  await until('the delete seen', () => inf.get('b') === undefined);
  assert.deepEqual(
    seen.map(([t, o]) => `${t} ${o.metadata.name}`),
    ['ADDED a', 'ADDED b', 'MODIFIED a', 'DELETED b'],
  );
});

test('over HTTPS, the cached decoded copies are frozen, and are not the store objects', async () => {
  const { srv, client } = await serverWithNodes('a');
  const inf = createInformer({ client, plural: 'nodes', logger: silentLogger });
  cleanups.push(() => inf.stop());
  inf.start();
  assert.equal(await inf.waitForSync(), true);
  const a = inf.get('a') as KubeObject;
  assert.notEqual(a, srv.store.get('nodes', 'a'), 'a decoded copy');
  assert.deepEqual(a, srv.store.get('nodes', 'a'), 'of the same content');
  assert.throws(() => {
    (a.metadata.labels as Record<string, string>).site = 'x';
  }, TypeError);
  const r = await srv.request('PATCH', `${API}/nodes/a`, { spec: { site: 'away' } }, MERGE);
  assert.equal(r.status, 200, r.text);
  await until('the update cached', () => (inf.get('a')?.spec as { site?: string }).site === 'away');
  assert.ok(Object.isFrozen(inf.get('a')?.spec), 'an updated copy is frozen too');
});
