import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holdThread } from '../meta/loop-time.ts';
import { idlePacer } from './idle-pacer.ts';
import { busySpell } from './testdata/helpers.ts';

/** A pacer over a fake clock whose looks at the loop report `loads` in turn (then `rest`). */
function fakePacer(loads: number[], rest: number, opts: { workMs?: number; maxWaitMs?: number } = {}) {
  let t = 0;
  const looks: number[] = [];
  const pace = idlePacer({
    workMs: opts.workMs ?? 20,
    stepMs: 10,
    busyAbove: 0.5,
    maxWaitMs: opts.maxWaitMs ?? 1000,
    now: () => t,
    utilization: (ms) => {
      t += ms;
      looks.push(t);
      return Promise.resolve(loads.shift() ?? rest);
    },
  });
  return { pace, looks, work: (ms: number) => (t += ms) };
}

test('within a slice of work the pacer only yields; after it, one look at a quiet loop and on', async () => {
  const { pace, looks, work } = fakePacer([], 0.1);
  work(5);
  await pace();
  assert.equal(looks.length, 0, 'the slice is not over');
  work(20);
  await pace();
  assert.equal(looks.length, 1);
  assert.equal(pace.stats().waitedMs, 0, 'a look that finds the loop quiet is not counted as waiting');
  await pace();
  assert.equal(looks.length, 1, 'a new slice began');
});

test('the pacer waits while the loop is busy and goes on once a look finds it quiet', async () => {
  const { pace, looks, work } = fakePacer([0.9, 0.95, 0.6, 0.3], 0.1);
  work(25);
  await pace();
  assert.equal(looks.length, 4);
  assert.equal(pace.stats().waitedMs, 30, 'three busy looks of 10 ms');
});

test('the waiting is bounded: past maxWaitMs the pacer no longer looks', async () => {
  const { pace, looks, work } = fakePacer([], 1, { maxWaitMs: 100 });
  work(25);
  await pace();
  assert.equal(looks.length, 10, 'looks until 100 ms were spent');
  const before = looks.length;
  for (let i = 0; i < 5; i++) {
    work(50);
    await pace();
  }
  assert.equal(looks.length, before, 'then only yields, however long the work runs');
});

test('the real pacer measures the loop: a busy loop makes it wait, a quiet one does not', async () => {
  const pace = idlePacer({ workMs: 0, stepMs: 20, maxWaitMs: 5000 });
  const until = busySpell(300);
  const t0 = performance.now();
  await pace();
  assert.ok(
    performance.now() >= until - 20,
    `went on ${Math.round(until - performance.now())} ms before the loop was free`,
  );
  assert.ok(pace.stats().waitedMs > 0);
  const waited = pace.stats().waitedMs;
  await pace();
  assert.equal(pace.stats().waitedMs, waited, 'a quiet loop: no waiting');
  assert.ok(performance.now() - t0 < 5000);
});

test('the real pacer does not count a loop held by batching (api/meta/loop-time.ts) as busy', async () => {
  const pace = idlePacer({ workMs: 0, stepMs: 20, maxWaitMs: 5000 });
  // As http/loop-batching.ts holds it: 15 ms of every ~16, which Node's own utilization counts as busy.
  let holding = true;
  const holder = (async () => {
    while (holding) {
      holdThread(15);
      await new Promise((r) => setTimeout(r, 1));
    }
  })();
  for (let i = 0; i < 5; i++) await pace();
  holding = false;
  await holder;
  assert.equal(pace.stats().waitedMs, 0, 'a held loop is not a busy one');
});
