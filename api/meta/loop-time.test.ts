import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { awaitingTurns, busyShare, holdThread, loopTime, workAwaitingTurns } from './loop-time.ts';

test('a held thread is counted apart: busy for Node, not for busyShare', async () => {
  await new Promise((r) => setImmediate(r)); // the loop has started (Node measures nothing before)
  const before = loopTime();
  const elu0 = performance.eventLoopUtilization();
  const took = holdThread(40);
  const after = loopTime();
  assert.ok(took >= 39, `held ${took} ms`);
  assert.ok(after.held - before.held >= 39, 'LoopTime.held grows by the hold');
  assert.ok(performance.eventLoopUtilization(elu0).utilization > 0.9, 'Node counts the hold as busy');
  assert.ok(busyShare(before, after) < 0.5, `busyShare ${busyShare(before, after)}`);
});

test('busyShare: work over wall time, holds left out; 0 when no time passed', () => {
  const t = (active: number, idle: number, held: number) => ({ active, idle, held });
  assert.equal(busyShare(t(0, 0, 0), t(0, 0, 0)), 0);
  assert.equal(busyShare(t(10, 10, 0), t(40, 20, 0)), 30 / 40);
  assert.equal(busyShare(t(10, 10, 0), t(40, 20, 20)), 10 / 40);
  assert.equal(busyShare(t(0, 0, 0), t(20, 0, 20)), 0);
});

test('awaitingTurns counts work in flight until each is done, once', () => {
  const base = workAwaitingTurns();
  const a = awaitingTurns();
  const b = awaitingTurns();
  assert.equal(workAwaitingTurns(), base + 2);
  a();
  a();
  assert.equal(workAwaitingTurns(), base + 1, 'done twice counts once');
  b();
  assert.equal(workAwaitingTurns(), base);
});
