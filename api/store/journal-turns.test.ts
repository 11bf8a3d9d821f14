import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workAwaitingTurns } from '../meta/loop-time.ts';
import { nodeStoreFs, type StoreFs } from './store-fs.ts';
import { node, settle, tempStore } from './testdata/helpers.ts';

test('a write waiting for its fdatasync counts as work awaiting the loop (no batching hold meanwhile)', async (t) => {
  let held: (() => void)[] | undefined;
  const fs: StoreFs = {
    ...nodeStoreFs,
    dataSync: async (fd) => {
      if (held) await new Promise<void>((resolve) => held?.push(resolve));
      return nodeStoreFs.dataSync(fd);
    },
  };
  const { store } = await tempStore(t, { fs });
  await store.create('nodes', node('a'));
  const base = workAwaitingTurns();
  held = [];
  const write = store.create('nodes', node('b'));
  const deadline = Date.now() + 10_000;
  while (held.length === 0) {
    assert.ok(Date.now() < deadline, 'the write reached its fdatasync');
    await settle(5);
  }
  assert.equal(workAwaitingTurns(), base + 1, 'the journal commit is marked while it waits for the disk');
  const waiting = held;
  held = undefined;
  for (const resume of waiting) resume();
  await write;
  await settle(5);
  assert.equal(workAwaitingTurns(), base, 'and unmarked once durable');
});
