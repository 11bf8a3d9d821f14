import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../meta/api-error.ts';
import type { SerializedWatchEvent, StoreWatchEvent } from './index.ts';
import { node, openAnyKindStore, record, settle, tempDir, tempStore } from './testdata/helpers.ts';

const names = (es: StoreWatchEvent[]) => es.map((e) => `${e.type} ${e.object.metadata.name}`);

test('a watch from resourceVersion 0 (or none) lists the current objects as ADDED, then follows changes', async (t) => {
  const { store } = await tempStore(t);
  await store.create('nodes', node('b'));
  await store.create('nodes', node('a'));
  await store.create('routes', node('r'));
  for (const rv of [undefined, '0']) {
    const w = record(store, 'nodes', { resourceVersion: rv });
    assert.deepEqual(names(await w.next(2)), ['ADDED a', 'ADDED b']);
    const c = await store.create('nodes', node('c'));
    const events = await w.next(3);
    assert.deepEqual(names(events), ['ADDED a', 'ADDED b', 'ADDED c']);
    assert.equal(events[2].object.metadata.resourceVersion, c.metadata.resourceVersion);
    await store.delete('nodes', 'c');
    assert.deepEqual(names(await w.next(4)).slice(3), ['DELETED c']);
    w.stop();
  }
});

test('a watch from resourceVersion N replays every later change of that kind, then follows', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a'));
  await store.update('nodes', { ...a, spec: { site: 'x' } });
  await store.create('routes', node('r'));
  await store.delete('nodes', 'a');
  const w = record(store, 'nodes', { resourceVersion: a.metadata.resourceVersion });
  const replayed = await w.next(2);
  assert.deepEqual(
    replayed.map((e) => `${e.type} ${e.object.metadata.resourceVersion}`),
    ['MODIFIED 2', 'DELETED 4'],
  );
  await store.create('nodes', node('b'));
  assert.deepEqual(names(await w.next(3)).slice(2), ['ADDED b']);
  w.stop();
  // A resourceVersion the store never issued (a client of a store restored from an older backup) would skip
  // whatever the store writes up to it: 410, so the client relists.
  assert.throws(
    () => store.watch('nodes', { resourceVersion: '7' }, () => {}),
    (e: ApiError) => e.code === 410 && /newer than this store's 5/.test(e.message),
  );
});

test('resuming from before the event log is 410 Expired; within it works; after reopen only the current rv', async (t) => {
  const dir = tempDir(t);
  const store = await openAnyKindStore({ dir, eventLogCapacity: 5 });
  for (let i = 0; i < 10; i++) await store.create('nodes', node(`n${i}`));
  assert.throws(
    () => store.watch('nodes', { resourceVersion: '1' }, () => {}),
    (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.code, 410);
      assert.equal(e.reason, 'Expired');
      assert.equal(e.message, 'too old resource version: 1 (oldest 5)');
      return true;
    },
  );
  const ok = record(store, 'nodes', { resourceVersion: '5' });
  assert.deepEqual(names(await ok.next(5)), ['ADDED n5', 'ADDED n6', 'ADDED n7', 'ADDED n8', 'ADDED n9']);
  ok.stop();
  assert.throws(
    () => store.watch('nodes', { resourceVersion: 'abc' }, () => {}),
    (e: unknown) => e instanceof ApiError && e.code === 400,
  );
  await store.close();
  const reopened = await openAnyKindStore({ dir, eventLogCapacity: 5 });
  t.after(() => reopened.close());
  assert.throws(
    () => reopened.watch('nodes', { resourceVersion: '9' }, () => {}),
    (e: unknown) => e instanceof ApiError && e.code === 410,
  );
  const fromNow = record(reopened, 'nodes', { resourceVersion: reopened.resourceVersion() });
  await reopened.delete('nodes', 'n0');
  assert.deepEqual(names(await fromNow.next(1)), ['DELETED n0']);
  fromNow.stop();
});

test('a watch of one named object resumes from before the event log when that object has not changed since; else 410', async (t) => {
  const dir = tempDir(t);
  const store = await openAnyKindStore({ dir, eventLogCapacity: 5 });
  const a = await store.create('nodes', node('a'));
  const b = await store.create('nodes', node('b'));
  for (let i = 0; i < 10; i++) await store.create('nodes', node(`n${i}`));
  const seen = store.resourceVersion();
  await store.update('nodes', { ...b, spec: { site: 'moved' } });
  for (let i = 0; i < 10; i++) await store.create('routes', node(`r${i}`));
  await store.close();
  // As after a restart: the log starts empty, and each agent's watch is from a resourceVersion before it.
  const reopened = await openAnyKindStore({ dir, eventLogCapacity: 5 });
  t.after(() => reopened.close());
  const gone = (e: unknown) => e instanceof ApiError && e.code === 410;
  const one = (name: string) => ({ resourceVersion: seen, fieldSelector: `metadata.name=${name}` });
  // a: unchanged since `seen` — resumes, and sees what comes next.
  const w = record(reopened, 'nodes', one('a'));
  await reopened.update('nodes', { ...a, spec: { site: 'later' } });
  const events = await w.next(1);
  assert.deepEqual(names(events), ['MODIFIED a']);
  assert.equal((events[0].object.spec as { site?: string }).site, 'later');
  w.stop();
  // b changed after `seen`: its watch would miss that change, so it is 410 and the client relists.
  assert.throws(() => reopened.watch('nodes', one('b'), () => {}), gone);
  // A name that does not exist (it may have been deleted since), and a watch of the whole kind: 410 as before.
  assert.throws(() => reopened.watch('nodes', one('nobody'), () => {}), gone);
  assert.throws(() => reopened.watch('nodes', { resourceVersion: seen }, () => {}), gone);
});

test('with a selector, objects moving in or out of it are ADDED or DELETED for that watcher', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a', { labels: { app: 'db' } }));
  const w = record(store, 'nodes', { resourceVersion: '0', labelSelector: 'app=web' });
  const into = await store.update('nodes', { ...a, metadata: { ...a.metadata, labels: { app: 'web' } } });
  const within = await store.update('nodes', { ...into, spec: { site: 'office' } });
  const out = await store.update('nodes', { ...within, metadata: { ...within.metadata, labels: { app: 'db' } } });
  await store.delete('nodes', 'a');
  const events = await w.next(3);
  assert.deepEqual(
    events.map((e) => e.type),
    ['ADDED', 'MODIFIED', 'DELETED'],
  );
  assert.equal(events[0].object.metadata.resourceVersion, into.metadata.resourceVersion);
  assert.deepEqual(events[2].object.metadata.labels, { app: 'web' }, 'DELETED carries the last matching content');
  assert.equal(
    events[2].object.metadata.resourceVersion,
    out.metadata.resourceVersion,
    "...with the change's resourceVersion",
  );
  await settle();
  assert.equal(w.events.length, 3, 'the deletion of a non-matching object is not seen');
  w.stop();
  const f = record(store, 'nodes', { resourceVersion: '1', fieldSelector: 'spec.site=office' });
  assert.deepEqual(
    (await f.next(3)).map((e) => e.type),
    ['ADDED', 'MODIFIED', 'DELETED'],
    'replay applies the same rules',
  );
  f.stop();
});

test('events arrive only once durable, in resourceVersion order, without gaps', async (t) => {
  const { store, dir } = await tempStore(t);
  const seen: number[] = [];
  let notDurable = 0;
  const w = store.watch('nodes', { resourceVersion: '0' }, (e) => {
    const rv = Number(e.object.metadata.resourceVersion);
    seen.push(rv);
    if (!readFileSync(join(dir, 'journal-0000000001.jsonl'), 'utf8').includes(`{"rv":${rv},`)) notDurable++;
  });
  await Promise.all(Array.from({ length: 200 }, (_, i) => store.create('nodes', node(`n${i}`))));
  await settle();
  assert.equal(notDurable, 0);
  assert.deepEqual(
    seen,
    Array.from({ length: 200 }, (_, i) => i + 1),
  );
  w.stop();
});

test('fan-out: 1,000 watchers share one event object, and a throwing callback stops only its own watch', async (t) => {
  const { store, logs } = await tempStore(t);
  await store.create('nodes', node('a'));
  const got: SerializedWatchEvent[] = [];
  let lastAt = 0;
  const ws = Array.from({ length: 1000 }, () =>
    store.watch('nodes', { resourceVersion: '1' }, (e) => {
      got.push(e);
      lastAt = performance.now();
    }),
  );
  let throws = 0;
  const bad = store.watch('nodes', { resourceVersion: '1' }, () => {
    throws++;
    throw new Error('boom');
  });
  await settle(10);
  const began = performance.now();
  await store.update('nodes', node('a', { spec: { site: 'x' } }));
  await settle(20);
  await store.update('nodes', node('a', { spec: { site: 'y' } }));
  await settle(20);
  assert.equal(got.length, 2000);
  assert.ok(
    got.slice(0, 1000).every((e) => e === got[0]),
    'no per-watcher copies',
  );
  assert.equal(got[0].json, JSON.stringify(got[0]), 'json is the serialized {type, object}');
  assert.ok(lastAt - began < 500, `fan-out took ${lastAt - began} ms`);
  assert.equal(throws, 1);
  assert.ok(logs.some((l) => (l as { msg: string }).msg === 'Stopped watch whose callback threw'));
  assert.equal(store.stats().watchers, 1000);
  ws.forEach((w) => {
    w.stop();
    w.stop();
  });
  bad.stop();
  assert.equal(store.stats().watchers, 0);
});

test('a watch holds no closures of its own: every watch shares its stop, pause and resume', async (t) => {
  const { store } = await tempStore(t);
  const seen: string[] = [];
  const a = store.watch('nodes', {}, (e) => seen.push(`a ${e.type}`));
  const b = store.watch('nodes', { fieldSelector: 'metadata.name=x' }, (e) => seen.push(`b ${e.type}`));
  assert.equal(a.stop, b.stop, 'stop is shared');
  assert.equal(a.pause, b.pause, 'pause is shared');
  assert.equal(a.resume, b.resume, 'resume is shared');
  b.stop();
  await store.create('nodes', node('x'));
  await settle();
  assert.deepEqual(seen, ['a ADDED'], 'the stopped watch got nothing, the other its event');
  a.stop();
});

test('omitStatusUpdates leaves out status-only changes; spec, metadata, deletion and selector moves still come', async (t) => {
  const { store } = await tempStore(t);
  const a = await store.create('nodes', node('a'));
  const from = { resourceVersion: a.metadata.resourceVersion };
  const all = record(store, 'nodes', from);
  const omit = record(store, 'nodes', { ...from, omitStatusUpdates: true });
  // Selected by a status field: the status write that moves the object in is still an ADDED, and the one out a DELETED.
  const ready = record(store, 'nodes', { ...from, fieldSelector: 'status.phase=Ready', omitStatusUpdates: true });
  const s1 = await store.update('nodes', { ...a, status: { phase: 'Ready' } }, { subresource: 'status' });
  const s2 = await store.update('nodes', { ...s1, status: { phase: 'Ready', note: 'x' } }, { subresource: 'status' });
  const spec = await store.update('nodes', { ...s2, spec: { site: 'office' } });
  const labels = await store.update('nodes', { ...spec, metadata: { ...spec.metadata, labels: { app: 'db' } } });
  await store.update('nodes', { ...labels, status: { phase: 'Gone' } }, { subresource: 'status' });
  await store.delete('nodes', 'a');
  const rvs = (es: StoreWatchEvent[]) => es.map((e) => `${e.type} ${e.object.metadata.resourceVersion}`);
  // Every watcher gets a change in the same turn, in order: once `all` has the deletion, the others had their chance.
  const every = await all.next(6);
  assert.deepEqual(
    every.map((e) => e.type),
    ['MODIFIED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED'],
  );
  const expected = [rvs(every)[2], rvs(every)[3], rvs(every)[5]];
  assert.deepEqual(rvs(omit.events), expected, 'the spec change, the label change and the deletion only');
  assert.deepEqual(
    ready.events.map((e) => `${e.type} ${(e.object.status as { phase?: string }).phase}`),
    ['ADDED Ready', 'MODIFIED Ready', 'MODIFIED Ready', 'DELETED Ready'],
  );
  assert.equal(ready.events[0].object.metadata.resourceVersion, s1.metadata.resourceVersion);
  // Replayed from the event log (where an older version may have to be decoded again): the same rules.
  const replay = record(store, 'nodes', { ...from, omitStatusUpdates: true });
  assert.deepEqual(rvs(await replay.next(3)), expected);
  for (const w of [all, omit, ready, replay]) w.stop();
});
