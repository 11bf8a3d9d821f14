import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../meta/api-error.ts';
import { jsonText } from '../meta/frozen.ts';
import type { KubeObject } from '../meta/types.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { node, openAnyKindStore, record, settle, tempStore } from './testdata/helpers.ts';

function rejectsWith(p: Promise<unknown>, reason: string, message?: RegExp): Promise<void> {
  return assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ApiError, `expected ApiError, got ${String(e)}`);
    assert.equal(e.reason, reason);
    if (message) assert.match(e.message, message);
    return true;
  });
}

test('create stamps server-owned metadata and ignores client-set values', async (t) => {
  const { store } = await tempStore(t);
  const input = node('a', {
    metadata: {
      name: 'a',
      uid: 'mine',
      resourceVersion: '99',
      generation: 7,
      creationTimestamp: '2000-01-01T00:00:00Z',
      deletionTimestamp: '2000-01-01T00:00:00Z',
      labels: { x: 'y' },
    },
  });
  const a = await store.create('nodes', input);
  assert.match(a.metadata.uid as string, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.equal(a.metadata.resourceVersion, '1');
  assert.equal(a.metadata.generation, 1);
  assert.match(a.metadata.creationTimestamp as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(Math.abs(Date.parse(a.metadata.creationTimestamp as string) - Date.now()) < 5000);
  assert.equal(a.metadata.deletionTimestamp, undefined);
  assert.deepEqual(a.metadata.labels, { x: 'y' });
  assert.deepEqual(store.get('nodes', 'a'), a);
  (input.metadata.labels as Record<string, string>).x = 'changed by caller';
  assert.deepEqual(store.get('nodes', 'a')?.metadata.labels, { x: 'y' }, 'the store keeps its own copy');
  const b = await store.create('routes', node('a'));
  assert.equal(b.metadata.resourceVersion, '2', 'one resourceVersion sequence across kinds');
  assert.equal(store.resourceVersion(), '2');
  await rejectsWith(store.create('nodes', node('a')), 'AlreadyExists', /nodes.meshctl.dev "a" already exists/);
});

test('generateName makes a unique name; a missing name is Invalid', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', { apiVersion: 'v', kind: 'Node', metadata: { generateName: 'web-' } });
  assert.match(a.metadata.name as string, /^web-[a-z0-9]{5}$/);
  assert.equal(a.metadata.generateName, 'web-');
  await rejectsWith(
    store.create('nodes', { apiVersion: 'v', kind: 'Node', metadata: {} }),
    'Invalid',
    /metadata.name: Required value/,
  );
});

test('update: optimistic concurrency, unconditional update, NotFound', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a'));
  const a2 = await store.update('nodes', { ...a, spec: { site: 'office' } });
  assert.equal(a2.metadata.resourceVersion, '2');
  await rejectsWith(
    store.update('nodes', { ...a, spec: { site: 'cellar' } }),
    'Conflict',
    /Operation cannot be fulfilled on nodes.meshctl.dev "a": the object has been modified; please apply your changes to the latest version and try again/,
  );
  const noRv = node('a', { spec: { site: 'cellar' } });
  const a3 = await store.update('nodes', noRv);
  assert.equal(a3.metadata.resourceVersion, '3');
  assert.equal(a3.metadata.uid, a.metadata.uid, 'uid and creationTimestamp are kept');
  assert.equal(a3.metadata.creationTimestamp, a.metadata.creationTimestamp);
  await rejectsWith(store.update('nodes', node('zz')), 'NotFound', /nodes.meshctl.dev "zz" not found/);
});

test('generation changes only when something other than metadata/status/apiVersion/kind changes', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a'));
  const labelled = await store.update('nodes', {
    ...a,
    metadata: { ...a.metadata, labels: { l: '1' }, annotations: { n: 'x' } },
  });
  assert.equal(labelled.metadata.generation, 1);
  assert.equal(labelled.metadata.resourceVersion, '2');
  const respec = await store.update('nodes', { ...labelled, spec: { site: 'office', extra: [1, { b: 2 }] } });
  assert.equal(respec.metadata.generation, 2);
  const same = await store.update('nodes', { ...respec, spec: { extra: [1, { b: 2 }], site: 'office' } });
  assert.equal(same.metadata.generation, 2, 'key order does not matter');
  const topLevel = await store.update('nodes', { ...respec, data: { k: 'v' } });
  assert.equal(topLevel.metadata.generation, 3, 'any top-level field but metadata/status counts');
  const status = await store.update('nodes', { ...topLevel, status: { phase: 'x' } }, { subresource: 'status' });
  assert.equal(status.metadata.generation, 3);
});

test('status subresource changes only .status; main resource keeps stored .status', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a'));
  const s = await store.update(
    'nodes',
    { ...a, spec: { site: 'IGNORED' }, metadata: { ...a.metadata, labels: { IGNORED: 'x' } }, status: { ready: true } },
    { subresource: 'status' },
  );
  assert.deepEqual(s.status, { ready: true });
  assert.deepEqual(s.spec, { site: 'home' });
  assert.equal(s.metadata.labels, undefined);
  const m = await store.update('nodes', { ...s, spec: { site: 'office' }, status: { ready: false } });
  assert.deepEqual(m.status, { ready: true }, 'a main update keeps the stored status');
  assert.deepEqual(m.spec, { site: 'office' });
  const cleared = await store.update('nodes', { ...m, status: undefined }, { subresource: 'status' });
  assert.equal(cleared.status, undefined);
  const noStatus = await store.update('nodes', { ...cleared, spec: { site: 'x' }, status: { sneaky: 1 } });
  assert.equal(noStatus.status, undefined, 'main update cannot add a status');
});

test('a no-op update writes nothing and keeps the resourceVersion', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a', { labels: { x: '1' } }));
  const w = record(store, 'nodes', { resourceVersion: a.metadata.resourceVersion });
  const lines = store.stats().journal.lines;
  const same = await store.update('nodes', { ...node('a', { labels: { x: '1' } }) });
  assert.equal(same.metadata.resourceVersion, a.metadata.resourceVersion);
  const sameStatus = await store.update('nodes', { ...a }, { subresource: 'status' });
  assert.equal(sameStatus.metadata.resourceVersion, a.metadata.resourceVersion);
  assert.equal(store.resourceVersion(), '1');
  assert.equal(store.stats().journal.lines, lines);
  await settle();
  assert.deepEqual(w.events, []);
  w.stop();
});

test('finalizers: delete marks once, removing the last finalizer deletes, new finalizers are refused', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a', { metadata: { name: 'a', finalizers: ['x/one', 'x/two'] } }));
  const w = record(store, 'nodes', { resourceVersion: a.metadata.resourceVersion });
  const marked = await store.delete('nodes', 'a');
  assert.ok(marked.metadata.deletionTimestamp);
  assert.equal(marked.metadata.resourceVersion, '2');
  assert.deepEqual(store.get('nodes', 'a'), marked);
  const again = await store.delete('nodes', 'a');
  assert.equal(again.metadata.deletionTimestamp, marked.metadata.deletionTimestamp);
  assert.equal(again.metadata.resourceVersion, '2', 'a second delete changes nothing');
  await rejectsWith(
    store.update('nodes', { ...marked, metadata: { ...marked.metadata, finalizers: ['x/one', 'x/two', 'x/new'] } }),
    'Invalid',
    /no new finalizers can be added if the object is being deleted/,
  );
  const cleared = { ...marked, metadata: { ...marked.metadata, deletionTimestamp: undefined } };
  const one = await store.update('nodes', { ...cleared, metadata: { ...cleared.metadata, finalizers: ['x/two'] } });
  assert.equal(
    one.metadata.deletionTimestamp,
    marked.metadata.deletionTimestamp,
    'a client cannot clear deletionTimestamp',
  );
  const gone = await store.update('nodes', { ...one, metadata: { ...one.metadata, finalizers: [] } });
  assert.equal(store.get('nodes', 'a'), undefined);
  assert.equal(gone.metadata.resourceVersion, '4');
  assert.deepEqual(
    (await w.next(3)).map((e) => e.type),
    ['MODIFIED', 'MODIFIED', 'DELETED'],
  );
  w.stop();
});

test('delete preconditions: uid and resourceVersion', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a'));
  await rejectsWith(
    store.delete('nodes', 'a', { uid: 'other' }),
    'Conflict',
    /Precondition failed: UID in precondition: other/,
  );
  await rejectsWith(
    store.delete('nodes', 'a', { resourceVersion: '7' }),
    'Conflict',
    /ResourceVersion in precondition: 7, ResourceVersion in object meta: 1/,
  );
  const gone = await store.delete('nodes', 'a', { uid: a.metadata.uid, resourceVersion: '1' });
  assert.equal(gone.metadata.resourceVersion, '2', 'the deleted object carries the deletion resourceVersion');
  await rejectsWith(store.delete('nodes', 'a'), 'NotFound');
});

function ownedBy(owner: KubeObject, name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  const ref = {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name as string,
    uid: owner.metadata.uid as string,
  };
  return node(name, { metadata: { name, ...extra, ownerReferences: [ref, ...(extra.ownerReferences ?? [])] } });
}

test('cascade: dependents in any kind go with their owner, recursively, honouring their finalizers', async (t) => {
  const { store } = await tempStore(t);
  const owner = await store.create('modules', node('m'));
  const other = await store.create('modules', node('other'));
  const child = await store.create('assignments', ownedBy(owner, 'c1'));
  await store.create('routes', ownedBy(child, 'grandchild'));
  await store.create('assignments', ownedBy(owner, 'c2', { finalizers: ['keep'] }));
  const shared = ownedBy(owner, 'shared');
  shared.metadata.ownerReferences?.push({
    apiVersion: 'v',
    kind: 'Module',
    name: 'other',
    uid: other.metadata.uid as string,
  });
  await store.create('assignments', shared);
  const unrelated = await store.create('assignments', node('unrelated'));
  const w = record(store, 'assignments', { resourceVersion: store.resourceVersion() });
  await store.delete('modules', 'm');
  assert.equal(store.get('modules', 'm'), undefined);
  assert.equal(store.get('assignments', 'c1'), undefined);
  assert.equal(store.get('routes', 'grandchild'), undefined);
  assert.ok(store.get('assignments', 'c2')?.metadata.deletionTimestamp, 'a dependent with finalizers is marked');
  const keptShared = store.get('assignments', 'shared');
  assert.deepEqual(
    keptShared?.metadata.ownerReferences?.map((r) => r.name),
    ['other'],
    'a dependent with another owner stays',
  );
  assert.deepEqual(store.get('assignments', 'unrelated'), unrelated);
  const events = await w.next(3);
  assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`).sort(), [
    'DELETED c1',
    'MODIFIED c2',
    'MODIFIED shared',
  ]);
  w.stop();
});

test('cascade through an ownership chain deeper than the call stack: all of it goes, on disk too', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = await openAnyKindStore({ dir, logger: () => {} });
  let owner = await store.create('nodes', node('root'));
  for (let i = 0; i < 5000; i++) owner = await store.create('events', ownedBy(owner, `e${i}`));
  await store.delete('nodes', 'root');
  assert.equal(store.list('events').items.length, 0);
  await store.close();
  const again = await openAnyKindStore({ dir, logger: () => {} });
  assert.equal(again.list('events').items.length, 0, 'the journal holds the whole cascade');
  await again.close();
});

test('an update that changes its owners moves the object in the cascade; one that keeps them leaves it', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('modules', node('a'));
  const b = await store.create('modules', node('b'));
  const c = await store.create('modules', node('c'));
  const moved = await store.create('assignments', ownedBy(a, 'moved'));
  await store.update('assignments', {
    ...ownedBy(b, 'moved'),
    metadata: { ...ownedBy(b, 'moved').metadata, resourceVersion: moved.metadata.resourceVersion },
  });
  const kept = await store.create('assignments', ownedBy(c, 'kept'));
  await store.update('assignments', { ...kept, spec: { site: 'elsewhere' } });
  await store.delete('modules', 'a');
  assert.ok(store.get('assignments', 'moved'), 'its old owner no longer takes it');
  await store.delete('modules', 'b');
  assert.equal(store.get('assignments', 'moved'), undefined, 'its new owner does');
  await store.delete('modules', 'c');
  assert.equal(store.get('assignments', 'kept'), undefined, 'an update that kept its owner left it in the cascade');
});

test('Orphan leaves dependents and removes their ownerReferences', async (t) => {
  const { store } = await tempStore(t);
  const owner = await store.create('modules', node('m'));
  await store.create('assignments', ownedBy(owner, 'c1'));
  await store.delete('modules', 'm', { propagationPolicy: 'Orphan' });
  assert.equal(store.get('modules', 'm'), undefined);
  assert.deepEqual(store.get('assignments', 'c1')?.metadata.ownerReferences, []);
  const owner2 = await store.create('modules', node('m2', { metadata: { name: 'm2', finalizers: ['f'] } }));
  await store.create('assignments', ownedBy(owner2, 'c2'));
  await store.delete('modules', 'm2', { propagationPolicy: 'Orphan' });
  assert.deepEqual(store.get('assignments', 'c2')?.metadata.ownerReferences, [], 'orphaned when marked');
  await store.update('modules', { ...node('m2'), metadata: { name: 'm2', finalizers: [] } });
  assert.ok(store.get('assignments', 'c2'), 'still there after the owner is gone');
});

test('dryRun computes results and errors but persists nothing', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a', { metadata: { name: 'a', finalizers: ['f'] } }));
  const w = record(store, 'nodes', { resourceVersion: '1' });
  const lines = store.stats().journal.lines;
  const dryNew = await store.create('nodes', node('b'), { dryRun: true });
  assert.equal(dryNew.metadata.name, 'b');
  assert.ok(dryNew.metadata.uid);
  assert.equal(store.get('nodes', 'b'), undefined);
  await rejectsWith(store.create('nodes', node('a'), { dryRun: true }), 'AlreadyExists');
  const dryUpd = await store.update('nodes', { ...a, spec: { site: 'x' } }, { dryRun: true });
  assert.equal(dryUpd.metadata.generation, 2);
  assert.deepEqual(store.get('nodes', 'a'), a);
  await rejectsWith(
    store.update('nodes', { ...a, metadata: { ...a.metadata, resourceVersion: '9' } }, { dryRun: true }),
    'Conflict',
  );
  const dryDel = await store.delete('nodes', 'a', { dryRun: true });
  assert.ok(dryDel.metadata.deletionTimestamp);
  assert.deepEqual(store.get('nodes', 'a'), a);
  assert.equal(store.resourceVersion(), '1');
  assert.equal(store.stats().journal.lines, lines);
  await settle();
  assert.deepEqual(w.events, []);
  w.stop();
});

test('list is sorted by name and filtered by label and field selectors', async (t) => {
  const { store } = await tempStore(t);
  for (const [name, app, site] of [
    ['c', 'web', 'home'],
    ['a', 'db', 'office'],
    ['b', 'web', 'office'],
  ]) {
    await store.create('nodes', node(name, { labels: { app }, spec: { site } }));
  }
  assert.deepEqual(
    store.list('nodes').items.map((o) => o.metadata.name),
    ['a', 'b', 'c'],
  );
  assert.deepEqual(
    store.list('nodes', { labelSelector: 'app=web' }).items.map((o) => o.metadata.name),
    ['b', 'c'],
  );
  assert.deepEqual(
    store
      .list('nodes', { labelSelector: 'app=web', fieldSelector: 'spec.site=office' })
      .items.map((o) => o.metadata.name),
    ['b'],
  );
  assert.deepEqual(
    store.list('nodes', { fieldSelector: 'metadata.name!=a' }).items.map((o) => o.metadata.name),
    ['b', 'c'],
  );
  // One required name reads that object only (an agent listing its own Declaration); the rest still applies.
  const named = (fieldSelector: string, labelSelector?: string): string[] =>
    store.list('nodes', { fieldSelector, labelSelector }).items.map((o) => o.metadata.name ?? '');
  assert.deepEqual(named('metadata.name=b'), ['b']);
  assert.deepEqual(named('metadata.name==c', 'app=web'), ['c']);
  assert.deepEqual(named('metadata.name=a', 'app=web'), []);
  assert.deepEqual(named('metadata.name=zz'), []);
  assert.equal(store.list('nodes').resourceVersion, '3');
  assert.deepEqual(store.list('nothing').items, []);
  assert.throws(
    () => store.list('nodes', { labelSelector: 'app in (' }),
    (e: unknown) => e instanceof ApiError && e.code === 400,
  );
  await store.delete('nodes', 'b');
  await store.create('nodes', node('aa'));
  assert.deepEqual(
    store.list('nodes').items.map((o) => o.metadata.name),
    ['a', 'aa', 'c'],
  );
});

test('an object as written and as deleted answers with the journal text it was written as (jsonText)', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a', { labels: { x: '1' } }));
  const s = await store.update('nodes', { ...a, status: { ready: true, n: -0 } }, { subresource: 'status' });
  const gone = await store.delete('nodes', 'a');
  for (const o of [a, s, gone]) assert.equal(jsonText(o), JSON.stringify(o));
  // The text comes from the store, not from encoding the object again: an object no write made is encoded.
  assert.equal(jsonText({ ...s }), JSON.stringify(s));
});
