import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, settle } from '../../api/meta/fake-clock.ts';
import { WorkQueue } from '../../api/client/work-queue.ts';
import { createController, TerminalError, type Reconciler, type Result } from './controller.ts';
import type { Logger, LogFields } from '../../api/meta/logger.ts';
import { ApiError } from '../../api/meta/api-error.ts';
import { eventually } from '../../test/eventually.ts';

/** A logger that keeps what it was told, so tests can read it. */
function memoryLogger(): Logger & { lines: Array<{ level: string; msg: string; fields?: LogFields }> } {
  const lines: Array<{ level: string; msg: string; fields?: LogFields }> = [];
  return {
    lines,
    info: (msg, fields) => {
      lines.push({ level: 'info', msg, fields });
    },
    error: (msg, fields) => {
      lines.push({ level: 'error', msg, fields });
    },
  };
}

function setup(reconcile: (key: string) => Promise<Result | void>, workers = 1) {
  const clock = new FakeClock();
  const queue = new WorkQueue({ clock });
  const logger = memoryLogger();
  const calls: Array<{ key: string; at: number }> = [];
  const reconciler: Reconciler = {
    reconcile: (key) => {
      calls.push({ key, at: clock.now() - 1_000_000 });
      return reconcile(key);
    },
  };
  const controller = createController({ name: 'test', reconciler, queue, clock, logger, workers });
  return { clock, queue, logger, calls, controller };
}

test('a failing reconcile is retried with doubling backoff, and success forgets the failures', async () => {
  let failuresLeft = 3;
  const { clock, queue, calls, controller, logger } = setup(async () => {
    if (failuresLeft-- > 0) throw new Error('not yet');
  });
  controller.start();
  queue.add('a');
  await settle();
  for (let i = 0; i < 40; i++) {
    clock.advance(1);
    await settle();
  }
  assert.deepEqual(
    calls.map((c) => c.at),
    [0, 5, 15, 35],
    'retried after 5, 10 and 20 ms',
  );
  assert.equal(queue.numRequeues('a'), 0, 'success reset the backoff');
  assert.equal(logger.lines.filter((l) => l.msg === 'Reconcile failed, will retry').length, 3);
  clock.advance(10_000);
  await settle();
  assert.equal(calls.length, 4, 'no retry after success');
  await controller.stop();
});

test("a write that finds the key's own object deleted is retried and logged at info; another object's NotFound is an error", async () => {
  let gone = false;
  const { clock, queue, calls, controller, logger } = setup(async (key) => {
    if (key === 'a' && !gone) {
      gone = true;
      throw ApiError.notFound('certificates', 'a');
    }
    if (key === 'b') throw ApiError.notFound('modules', 'web');
  });
  controller.start();
  queue.add('a');
  queue.add('b');
  await settle();
  clock.advance(10);
  await settle();
  assert.ok(calls.filter((c) => c.key === 'a').length >= 2, 'the deleted one was retried');
  assert.deepEqual(
    logger.lines.filter((l) => l.fields?.key === 'a').map((l) => `${l.level} ${l.msg}`),
    ['info Reconcile raced a delete, will retry'],
  );
  assert.equal(logger.lines.find((l) => l.fields?.key === 'b')?.msg, 'Reconcile failed, will retry');
  assert.equal(logger.lines.find((l) => l.fields?.key === 'b')?.level, 'error');
  await controller.stop();
});

test('a TerminalError is not retried', async () => {
  const { clock, queue, calls, controller, logger } = setup(async () => {
    throw new TerminalError('spec.version does not exist');
  });
  controller.start();
  queue.add('a');
  await settle();
  clock.advance(2_000_000);
  await settle();
  assert.equal(calls.length, 1);
  assert.equal(queue.numRequeues('a'), 0);
  const line = logger.lines.find((l) => l.msg === 'Reconcile failed terminally');
  assert.equal(line?.fields?.key, 'a');
  queue.add('a');
  await settle();
  assert.equal(calls.length, 2, 'a new event still reconciles the key');
  await controller.stop();
});

test('requeueAfter looks at the key again after that long', async () => {
  const { clock, queue, calls, controller } = setup(async () => ({ requeueAfter: 1000 }));
  controller.start();
  queue.add('a');
  await settle();
  clock.advance(999);
  await settle();
  assert.equal(calls.length, 1);
  clock.advance(1);
  await settle();
  assert.deepEqual(
    calls.map((c) => c.at),
    [0, 1000],
  );
  await controller.stop();
});

test('workers reconcile different keys at once but never one key twice at once', async () => {
  const gates = new Map<string, Array<() => void>>();
  const active = new Set<string>();
  let overlap = false;
  let maxParallel = 0;
  const { queue, calls, controller } = setup(async (key) => {
    if (active.has(key)) overlap = true;
    active.add(key);
    maxParallel = Math.max(maxParallel, active.size);
    await new Promise<void>((resolve) => gates.set(key, [...(gates.get(key) ?? []), resolve]));
    active.delete(key);
  }, 3);
  controller.start();
  for (const k of ['a', 'b', 'c']) queue.add(k);
  await settle();
  assert.equal(maxParallel, 3, 'three workers, three keys in flight');
  queue.add('a');
  queue.add('a');
  await settle();
  assert.equal(calls.filter((c) => c.key === 'a').length, 1, 'a is not started twice');
  const openAll = (): void => {
    for (const [k, g] of gates) {
      gates.delete(k);
      g.forEach((fn) => fn());
    }
  };
  openAll();
  await settle();
  assert.equal(calls.filter((c) => c.key === 'a').length, 2, 'the re-added a ran again after the first finished');
  openAll();
  await settle();
  assert.equal(overlap, false);
  await controller.stop();
});

test('stop waits for the reconcile in flight and starts no new ones', async () => {
  let finish: () => void = () => {};
  let finished = false;
  const { queue, calls, controller } = setup(async () => {
    await new Promise<void>((resolve) => {
      finish = resolve;
    });
    finished = true;
  });
  controller.start();
  queue.add('a');
  queue.add('b');
  await settle();
  const stopping = controller.stop();
  let stopped = false;
  void stopping.then(() => {
    stopped = true;
  });
  await settle();
  assert.equal(stopped, false, 'still waiting for a');
  finish();
  await stopping;
  assert.equal(finished, true);
  assert.deepEqual(
    calls.map((c) => c.key),
    ['a'],
    'b was not started after stop',
  );
});

test('workers let the event loop run between keys, also when no reconcile waits for I/O', async () => {
  let reconciled = 0;
  const queue = new WorkQueue({ clock: new FakeClock() });
  const c = createController({
    name: 'busy',
    queue,
    workers: 4,
    reconciler: { reconcile: async () => void reconciled++ },
    logger: memoryLogger(),
  });
  for (let i = 0; i < 10_000; i++) queue.add(`k${i}`);
  // An I/O callback (a connection, a request) queued before the keys are taken must not wait for all of them.
  const ioTurn = new Promise<number>((resolve) => setImmediate(() => resolve(reconciled)));
  c.start();
  const atIo = await ioTurn;
  assert.ok(atIo < 10_000, `the event loop turned after ${atIo} of 10,000 reconciles`);
  await eventually(async () => assert.equal(reconciled, 10_000, 'every key reconciled'));
  await c.stop();
});
