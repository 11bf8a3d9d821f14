// The event log keeps one decoded version per object (store-event.ts): once a newer change of an object is
// published, its older versions are only JSON in the log, so the garbage collector takes the old objects; a watch
// replaying the log still gets every version, as it was written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { KubeObject } from '../meta/types.ts';
import type { SerializedWatchEvent } from './index.ts';
import { node, record, tempStore, type AnyKindStore } from './testdata/helpers.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Writes three versions of `a`; returns weak references to the first two and the resourceVersion before them. */
async function threeVersions(store: AnyKindStore): Promise<{ old: WeakRef<KubeObject>[]; from: string }> {
  await store.create('routes', node('r')); // a watch from resourceVersion 0 would list, not replay
  const from = store.resourceVersion();
  const v1 = await store.create('nodes', node('a', { labels: { site: 'one' } }));
  const v2 = await store.update('nodes', { ...v1, spec: { site: 'two' } });
  await store.update('nodes', { ...v2, spec: { site: 'three' } });
  return { old: [new WeakRef(v1), new WeakRef(v2)], from };
}

test('the log lets go of the old versions of an object, and a replay still gets each version', async (t) => {
  const { store } = await tempStore(t);
  const { old, from } = await threeVersions(store);
  // No deref() between collections: a deref keeps its target alive until the current job ends.
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(
    old.map((r) => r.deref() === undefined),
    [true, true],
    'versions 1 and 2 are no longer held by the event log',
  );
  assert.equal(store.stats().eventLog.size, 4, 'the log still has every event (the route and three of a)');

  const w = record(store, 'nodes', { resourceVersion: from });
  const events = (await w.next(3)) as SerializedWatchEvent[];
  w.stop();
  assert.deepEqual(
    events.map((e) => `${e.type} ${(e.object.spec as { site: string }).site}`),
    ['ADDED home', 'MODIFIED two', 'MODIFIED three'],
  );
  for (const e of events) {
    assert.equal(JSON.stringify(e), e.json, 'JSON.stringify(event) is its line');
    assert.ok(Object.isFrozen(e.object.metadata), 'a decoded version is frozen like a stored one');
  }
  assert.equal(events[2].object, store.get('nodes', 'a'), 'the newest version is the store object itself');
});

test('a watch of one name replaying the log sees its object move out of a label selector', async (t) => {
  const { store } = await tempStore(t);
  await store.create('routes', node('r')); // a watch from resourceVersion 0 would list, not replay
  const from = store.resourceVersion();
  const a = await store.create('nodes', node('a', { labels: { app: 'web' } }));
  await store.create('nodes', node('b', { labels: { app: 'web' } }));
  const moved = await store.update('nodes', { ...a, metadata: { ...a.metadata, labels: { app: 'db' } } });
  await store.update('nodes', { ...moved, spec: { site: 'later' } });
  const w = record(store, 'nodes', {
    resourceVersion: from,
    labelSelector: 'app=web',
    fieldSelector: 'metadata.name=a',
  });
  const events = await w.next(2);
  w.stop();
  assert.deepEqual(
    events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.labels?.app}`),
    ['ADDED a web', 'DELETED a web'],
    'the DELETED carries the content it had before it moved out, decoded from the log',
  );
  assert.equal(events[1].object.metadata.resourceVersion, moved.metadata.resourceVersion);
});

test("an event that left the log is let go of though its object is still stored, and the object's next change still moves it out of a selector", async (t) => {
  const { store } = await tempStore(t, { eventLogCapacity: 2 });
  let first: WeakRef<SerializedWatchEvent> | undefined;
  const seen: string[] = [];
  const all = store.watch('nodes', { resourceVersion: store.resourceVersion() }, (e) => {
    first ??= new WeakRef(e);
  });
  const web = store.watch(
    'nodes',
    { resourceVersion: store.resourceVersion(), labelSelector: 'app=web' },
    (e) => void seen.push(`${e.type} ${e.object.metadata?.name} ${e.object.metadata?.labels?.app}`),
  );
  const a = await store.create('nodes', node('a', { labels: { app: 'web' } }));
  await store.create('nodes', node('b'));
  await store.create('nodes', node('c'));
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
  await new Promise((r) => setImmediate(r));
  assert.ok(first, 'the watch saw the first event');
  assert.equal(first.deref(), undefined, "a's ADDED left the log of 2 and is no longer held");
  assert.ok(store.get('nodes', 'a'), 'while a is still stored');
  await store.update('nodes', { ...a, metadata: { ...a.metadata, labels: { app: 'db' } } });
  await new Promise((r) => setImmediate(r));
  all.stop();
  web.stop();
  assert.deepEqual(seen, ['ADDED a web', 'DELETED a web'], 'the DELETED carries the content it had before');
});
