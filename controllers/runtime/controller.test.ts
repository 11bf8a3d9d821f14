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

test("a controller that yields to another's queue reconciles nothing while it is busy, for at most yieldMaxMs of a spell", async () => {
  const clock = new FakeClock();
  const other = new WorkQueue({ clock });
  const queue = new WorkQueue({ clock });
  const reconciled: string[] = [];
  const controller = createController({
    name: 'status',
    queue,
    clock,
    logger: memoryLogger(),
    workers: 2,
    yieldTo: other,
    yieldMaxMs: 10_000,
    reconciler: { reconcile: async (key) => void reconciled.push(key) },
  });
  /** Lets the other queue's one key be taken and done: it is idle again. */
  const finishOther = async (): Promise<void> => {
    const key = (await other.get()) as string;
    other.done(key);
  };
  controller.start();
  queue.add('a');
  await eventually(async () => assert.deepEqual(reconciled, ['a'], 'the other queue idle: no wait'));

  other.add('declaration');
  // The two workers take b and c and hold them; d and e wait in the queue, where their second adds collapse.
  for (const key of ['b', 'c', 'd', 'e', 'd', 'e']) queue.add(key);
  await settle(6);
  clock.advance(9_999);
  await settle(6);
  assert.deepEqual(reconciled, ['a'], 'nothing while the other queue is busy');
  await finishOther();
  await eventually(async () => assert.deepEqual(reconciled.slice(1).sort(), ['b', 'c', 'd', 'e']));
  await settle(6);
  assert.equal(reconciled.length, 5, 'd and e were added twice while they waited, and reconciled once');

  // A spell longer than yieldMaxMs: held back that long, then let through until the other queue is next idle.
  other.add('declaration');
  queue.add('x');
  await settle(6);
  clock.advance(9_999);
  await settle(6);
  assert.equal(reconciled.includes('x'), false);
  clock.advance(1);
  await eventually(async () => assert.equal(reconciled.includes('x'), true, 'let through after yieldMaxMs'));
  queue.add('f');
  await eventually(async () => assert.equal(reconciled.includes('f'), true, 'no wait for the rest of the spell'));
  await finishOther();
  other.add('declaration');
  queue.add('g');
  await settle(6);
  assert.equal(reconciled.includes('g'), false, 'a new spell holds it back again');

  // Stopping does not wait for the spell, and reconciles nothing more.
  await controller.stop();
  assert.equal(reconciled.includes('g'), false);
});
