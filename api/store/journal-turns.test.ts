import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workAwaitingTurns } from '../meta/loop-time.ts';
import { heldDataSync, node, settle, tempStore } from './testdata/helpers.ts';

test('a write waiting for its fdatasync counts as work awaiting the loop (no batching hold meanwhile)', async (t) => {
  const disk = heldDataSync();
  const { store } = await tempStore(t, { fs: disk.fs });
  await store.create('nodes', node('a'));
  const base = workAwaitingTurns();
  disk.hold();
  const write = store.create('nodes', node('b'));
  await disk.reached('the write reached its fdatasync');
  assert.equal(workAwaitingTurns(), base + 1, 'the journal commit is marked while it waits for the disk');
  disk.release();
  await write;
  await settle(5);
  assert.equal(workAwaitingTurns(), base, 'and unmarked once durable');
});
