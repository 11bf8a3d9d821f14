/**
 * Flow control of a store watch (watch-hub.ts): a paused watch is delivered nothing (the events wait in the
 * shared log), a resumed one catches up in order without gaps or repeats, and one the log has moved past while
 * it was paused gets the 410 ERROR.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoreWatchEvent } from './types.ts';
import { node, settle, tempStore } from './testdata/helpers.ts';

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    assert.ok(Date.now() < deadline, what);
    await settle(5);
  }
}

test('a paused watch gets nothing until resumed, then every event in order, once', async (t) => {
  const { store } = await tempStore(t);
  const got: StoreWatchEvent[] = [];
  const w = store.watch('nodes', { resourceVersion: store.resourceVersion() }, (e) => {
    got.push(e);
    w.pause?.(); // a consumer whose buffer is full after each event
  });
  assert.ok(w.pause && w.resume, 'the durable store offers flow control');
  for (let i = 0; i < 5; i++) await store.create('nodes', node(`n${i}`)); // each one durable and published
  assert.deepEqual(
    got.map((e) => e.object.metadata.name),
    ['n0'],
    'paused after the first: the writes since were not delivered',
  );
  for (let n = 2; n <= 5; n++) {
    w.resume();
    await until(() => got.length === n, `event ${n} after resume`);
  }
  assert.deepEqual(
    got.map((e) => `${e.type} ${e.object.metadata.name}`),
    ['ADDED n0', 'ADDED n1', 'ADDED n2', 'ADDED n3', 'ADDED n4'],
  );
  w.resume();
  await store.create('nodes', node('live'));
  await until(() => got.length === 6, 'a resumed, caught-up watch gets live events');
  w.stop();
});

test('a watch paused while the log moved past it gets the 410 ERROR when resumed', async (t) => {
  const { store } = await tempStore(t, { eventLogCapacity: 3 });
  const got: StoreWatchEvent[] = [];
  const w = store.watch('nodes', { resourceVersion: store.resourceVersion() }, (e) => got.push(e));
  w.pause?.();
  for (let i = 0; i < 6; i++) await store.create('nodes', node(`n${i}`));
  assert.equal(got.length, 0);
  w.resume?.();
  await until(() => got.length === 1, 'an ERROR event');
  assert.equal(got[0].type, 'ERROR');
  const status = got[0].object;
  assert.equal('code' in status ? status.code : undefined, 410);
});

test("a watch on one name is offered only that object's events, and stays resumable while others' fill the log", async (t) => {
  const { store } = await tempStore(t, { eventLogCapacity: 3 });
  await store.create('nodes', node('mine'));
  const got: StoreWatchEvent[] = [];
  const opts = { resourceVersion: store.resourceVersion(), fieldSelector: 'metadata.name=mine' };
  const w = store.watch('nodes', opts, (e) => got.push(e));
  await settle(5);
  // Six writes of other objects: more than the log holds. A watch on `mine` has nothing to see in them.
  for (let i = 0; i < 6; i++) await store.create('nodes', node(`other${i}`));
  w.pause?.(); // its consumer fills up outside any delivery (e.g. a bookmark line)
  await store.update('nodes', { ...node('mine'), metadata: { ...node('mine').metadata, labels: { v: '2' } } });
  w.resume?.();
  await until(() => got.length === 1, "the resumed watch gets mine's change");
  assert.deepEqual(
    got.map((e) => `${e.type} ${e.object.metadata.name}`),
    ['MODIFIED mine'],
    'no 410: the events it missed were none of its own',
  );
  assert.equal(store.stats().watchers, 1);
  w.stop();
  assert.equal(store.stats().watchers, 0);
});
