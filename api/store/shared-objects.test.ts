// Stored objects are frozen and shared (api/meta/frozen.ts): what a write returns, get, list and watch events all
// hand out the store's own object, which cannot be changed in place, also after a reopen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../meta/types.ts';
import { node, record, tempStore } from './testdata/helpers.ts';

/** Throws unless `obj` and what it holds are frozen: an assignment at each level must throw a TypeError. */
function assertFrozen(obj: KubeObject, what: string): void {
  assert.throws(
    () => {
      (obj as { spec?: unknown }).spec = {};
    },
    TypeError,
    `${what}: top level`,
  );
  assert.throws(
    () => {
      obj.metadata.name = 'changed';
    },
    TypeError,
    `${what}: metadata`,
  );
  const labels = obj.metadata.labels as Record<string, string>;
  assert.throws(
    () => {
      labels.site = 'changed';
    },
    TypeError,
    `${what}: labels`,
  );
}

test('stored objects are frozen: as written, read, listed, watched, deleted and reopened', async (t) => {
  const { store, dir } = await tempStore(t);
  const w = record(store, 'nodes');
  const a = await store.create('nodes', node('a', { labels: { site: 'home' } }));
  assertFrozen(a, 'created');
  assertFrozen(store.get('nodes', 'a') as KubeObject, 'get');
  assertFrozen(store.list('nodes').items[0], 'list');
  const updated = await store.update('nodes', { ...a, spec: { site: 'away' } });
  assertFrozen(updated, 'updated');
  const events = await w.next(2);
  for (const e of events) assertFrozen(e.object, `watch ${e.type}`);
  const gone = await store.delete('nodes', 'a');
  assertFrozen(gone, 'deleted');
  await store.create('nodes', node('b', { labels: { site: 'home' } }));
  w.stop();
  await store.close();
  const reopened = await tempStore(t, { dir });
  assertFrozen(reopened.store.get('nodes', 'b') as KubeObject, 'after a reopen');
  assert.equal(reopened.store.get('nodes', 'b')?.metadata.labels?.site, 'home', 'the reopened object is intact');
});

test('a status write shares the parts it left alone with the previous version; reopened, the objects are the same', async (t) => {
  const { store, dir } = await tempStore(t);
  const a = await store.create('nodes', node('a', { labels: { site: 'home' } }));
  const b = await store.update(
    'nodes',
    { ...a, status: { lastSeen: '2026-01-01T00:00:00Z', undef: undefined } },
    {
      subresource: 'status',
    },
  );
  assert.equal(b.spec, a.spec, 'the spec is the previous version’s own object');
  assert.equal(b.metadata.labels, a.metadata.labels, 'so are untouched parts of the metadata');
  assert.notEqual(b.metadata, a.metadata, 'the metadata itself is new (its resourceVersion changed)');
  assert.deepEqual(b.status, { lastSeen: '2026-01-01T00:00:00Z' }, 'stored as JSON stores it: no undefined key');
  assertFrozen(b, 'a status write');
  await store.close();
  const reopened = await tempStore(t, { dir });
  assert.deepStrictEqual(reopened.store.get('nodes', 'a'), b, 'the journal holds exactly the object as stored');
});
