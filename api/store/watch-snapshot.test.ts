/**
 * The shared initial events of watches from resourceVersion 0 (watch-snapshots.ts): one encoding for every
 * concurrent watch, whole ADDED lines, only durable state, and a new snapshot once the old one lags too far.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeSnapshot, type WatchSnapshot } from './watch-snapshots.ts';
import { heldDataSync, node, record, settle, tempStore, type AnyKindStore } from './testdata/helpers.ts';

/** The snapshot's lines, parsed. */
function lines(s: WatchSnapshot): { type: string; object: { metadata: { name: string } } }[] {
  return Buffer.concat(s.chunks)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
}

function snapshotOf(store: AnyKindStore, plural: string): Promise<WatchSnapshot> {
  assert.ok(store.watchSnapshot, 'the durable store offers watch snapshots');
  return store.watchSnapshot(plural);
}

test('concurrent watches from 0 share one snapshot: every object as an ADDED line, as the store serializes it', async (t) => {
  const { store } = await tempStore(t);
  for (const name of ['c', 'a', 'b']) await store.create('nodes', node(name));
  await store.create('routes', node('r'));
  const [first, second] = await Promise.all([snapshotOf(store, 'nodes'), snapshotOf(store, 'nodes')]);
  assert.equal(first, second, 'one snapshot object for both');
  assert.equal(first.resourceVersion, store.resourceVersion());
  const text = Buffer.concat(first.chunks).toString('utf8');
  const expected = store
    .list('nodes')
    .items.map((o) => JSON.stringify({ type: 'ADDED', object: o }) + '\n')
    .join('');
  assert.equal(text, expected);
  assert.equal(first.objects, 3);
  assert.equal(first.bytes, Buffer.byteLength(expected));
  assert.deepEqual(store.stats().watchSnapshots, { built: 1, shared: 1 });
});

test('chunks hold whole lines of about the chunk size', () => {
  const items = Array.from({ length: 50 }, (_, i) => ({
    ...node(`n${String(i).padStart(2, '0')}`),
    metadata: { name: `n${i}`, resourceVersion: String(i + 1) },
  }));
  const s = encodeSnapshot('nodes', items, '50', 1000);
  assert.ok(s.chunks.length > 5, `${s.chunks.length} chunks`);
  for (const chunk of s.chunks) {
    assert.ok(chunk.toString('utf8').endsWith('}\n'), 'a chunk ends with a whole line');
    assert.ok(chunk.length < 1000 + 300, `chunk of ${chunk.length} bytes`);
  }
  assert.equal(lines(s).length, 50);
});

test('a lagging snapshot is rebuilt; one within the lag is reused and the watch from its rv completes it', async (t) => {
  const { store } = await tempStore(t, { eventLogCapacity: 8 }); // reuse while at most 2 events came after
  await store.create('nodes', node('a'));
  const old = await snapshotOf(store, 'nodes');
  await store.create('nodes', node('b'));
  const reused = await snapshotOf(store, 'nodes');
  assert.equal(reused, old, 'one event later: still shared');
  const w = record(store, 'nodes', { resourceVersion: reused.resourceVersion });
  assert.deepEqual(
    (await w.next(1)).map((e) => `${e.type} ${e.object.metadata.name}`),
    ['ADDED b'],
    'the watch from the snapshot brings what came after it',
  );
  w.stop();
  await store.create('nodes', node('c'));
  await store.create('nodes', node('d'));
  const fresh = await snapshotOf(store, 'nodes');
  assert.notEqual(fresh, old, 'three events later: a new snapshot');
  assert.deepEqual(
    lines(fresh).map((l) => l.object.metadata.name),
    ['a', 'b', 'c', 'd'],
  );
  assert.equal(fresh.resourceVersion, store.resourceVersion());
});

test('a snapshot is sent only once the state it shows is durable', async (t) => {
  const disk = heldDataSync();
  const { store } = await tempStore(t, { fs: disk.fs });
  await store.create('nodes', node('a'));
  disk.hold();
  const writeB = store.create('nodes', node('b'));
  await disk.reached('the write of b reached its fdatasync');
  let released = false;
  const snapshot = snapshotOf(store, 'nodes').then((s) => ({ s, released }));
  await settle(50); // a snapshot that did not wait would have resolved by now, seeing `released` false
  released = true;
  disk.release();
  const got = await snapshot;
  assert.equal(got.released, true, 'the snapshot waited for the fdatasync of the state it lists');
  assert.deepEqual(
    lines(got.s).map((l) => l.object.metadata.name),
    ['a', 'b'],
  );
  assert.equal(got.s.resourceVersion, (await writeB).metadata.resourceVersion);
});
