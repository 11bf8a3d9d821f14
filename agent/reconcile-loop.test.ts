import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sleep, type Clock } from '../api/meta/clock.ts';
import { FakeClock, settle } from '../api/meta/fake-clock.ts';
import type { Declaration } from '../api/v1alpha1/generated/declaration.ts';
import type { Engine, ReconcileResult } from './engine/reconciler.ts';
import { memoryLogger } from './engine/testing.ts';
import { createReconcileLoop, type RunOutcome } from './reconcile-loop.ts';

const decl = {
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Declaration',
  metadata: { name: 'a' },
  spec: { generation: 1, resources: [] },
} as Declaration;

/** An engine whose reconciles take `ms` on `clock` and record how many ran at once. */
function slowEngine(clock: Clock, ms: number) {
  let active = 0;
  const seen = { runs: 0, maxActive: 0 };
  const engine: Engine = {
    plan: async () => [],
    inventory: async () => [],
    retryNow: () => {},
    async reconcile(): Promise<ReconcileResult> {
      active++;
      seen.maxActive = Math.max(seen.maxActive, active);
      if (ms > 0) await sleep(clock, ms).promise;
      active--;
      seen.runs++;
      return {
        results: [],
        steps: [],
        startedAt: '',
        durationMs: ms,
        timings: { observeMs: 0, planMs: 0, applyMs: 0 },
        counts: {},
        owned: 0,
      };
    },
  };
  return { engine, seen };
}

test('reconcile loop: reconciles never overlap; triggers during a run collapse into one more run', async () => {
  const clock = new FakeClock();
  const { engine, seen } = slowEngine(clock, 30);
  const outcomes: RunOutcome[] = [];
  const loop = createReconcileLoop({
    engine,
    declaration: () => decl,
    resources: () => [],
    intervalMs: 60_000,
    logger: memoryLogger(),
    node: 'a',
    onRun: (o) => {
      outcomes.push(o);
    },
    clock,
  });
  const first = loop.trigger('start');
  await settle();
  const more = [loop.trigger('a'), loop.trigger('b'), loop.trigger('c')];
  clock.advance(30);
  await settle();
  clock.advance(30);
  await Promise.all([first, ...more]);
  assert.equal(seen.maxActive, 1);
  assert.equal(seen.runs, 2, 'the first run, then one more for the three triggers made while it ran');
  assert.equal(outcomes.length, 2);
  await loop.stop();
});

test('reconcile loop: nothing is reconciled before a declaration is stored; the interval timer runs after start()', async () => {
  const clock = new FakeClock();
  const { engine, seen } = slowEngine(clock, 0);
  let stored: Declaration | undefined;
  const loop = createReconcileLoop({
    engine,
    declaration: () => stored,
    resources: () => [],
    intervalMs: 20,
    logger: memoryLogger(),
    node: 'a',
    onRun: () => {},
    clock,
  });
  await loop.trigger('start');
  assert.equal(seen.runs, 0);
  stored = decl;
  loop.start();
  for (let t = 0; t < 120; t += 20) {
    clock.advance(20);
    await settle();
  }
  await loop.stop();
  assert.ok(seen.runs >= 2, `timer runs: ${seen.runs}`);
  const after = seen.runs;
  clock.advance(60);
  await settle();
  assert.equal(seen.runs, after, 'no run after stop()');
});

test('reconcile loop: an engine error is reported as an outcome, and the loop goes on', async () => {
  let fail = true;
  const clock = new FakeClock();
  const engine = {
    ...slowEngine(clock, 0).engine,
    reconcile: async () => {
      if (fail) throw new Error('store is gone');
      return slowEngine(clock, 0).engine.reconcile([]);
    },
  } as Engine;
  const outcomes: RunOutcome[] = [];
  const logger = memoryLogger();
  const loop = createReconcileLoop({
    engine,
    declaration: () => decl,
    resources: () => [],
    intervalMs: 60_000,
    logger,
    node: 'a',
    onRun: (o) => {
      outcomes.push(o);
    },
    clock,
  });
  await loop.trigger('x');
  fail = false;
  await loop.trigger('y');
  assert.deepEqual(
    outcomes.map((o) => o.error?.message ?? 'ok'),
    ['store is gone', 'ok'],
  );
  assert.ok(logger.lines.some((l) => l.msg === 'Failed to reconcile Declaration'));
  await loop.stop();
});
