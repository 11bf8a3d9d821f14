import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, settle } from '../meta/fake-clock.ts';
import { WorkQueue } from './work-queue.ts';

/** Takes every key that is ready right now (marking each done), in order. */
async function drain(q: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) {
    const k = (await q.get()) as string;
    out.push(k);
    q.done(k);
  }
  return out;
}

test('repeated adds of a waiting key collapse into one', async () => {
  const q = new WorkQueue({ clock: new FakeClock() });
  q.add('a');
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.len(), 2);
  assert.deepEqual(await drain(q), ['a', 'b']);
});

test('a key added while it is processed is queued again only after done', async () => {
  const q = new WorkQueue({ clock: new FakeClock() });
  q.add('a');
  const k = await q.get();
  assert.equal(k, 'a');
  q.add('a');
  q.add('a');
  assert.equal(q.len(), 0, 'not handed out while in process');
  q.done('a');
  assert.equal(q.len(), 1, 'requeued once after done');
  assert.deepEqual(await drain(q), ['a']);
  assert.equal(q.len(), 0);
});

test('a key is never processed by two workers at once', async () => {
  const q = new WorkQueue({ clock: new FakeClock() });
  const active = new Map<string, number>();
  const processed: string[] = [];
  let maxActive = 0;
  let release: Array<() => void> = [];
  const worker = async (): Promise<void> => {
    for (let k = await q.get(); k !== undefined; k = await q.get()) {
      const n = (active.get(k) ?? 0) + 1;
      active.set(k, n);
      maxActive = Math.max(maxActive, n);
      await new Promise<void>((resolve) => release.push(resolve));
      active.set(k, n - 1);
      processed.push(k);
      q.done(k);
    }
  };
  const workers = [worker(), worker(), worker()];
  q.add('a');
  await settle();
  q.add('a');
  q.add('a');
  q.add('b');
  await settle();
  assert.equal(release.length, 2, 'a and b in process, the re-added a waits');
  assert.equal(active.get('a'), 1);
  for (let round = 0; round < 5 && release.length > 0; round++) {
    const r = release;
    release = [];
    r.forEach((fn) => fn());
    await settle();
  }
  assert.equal(maxActive, 1);
  assert.deepEqual(processed.sort(), ['a', 'a', 'b']);
  q.shutDown();
  await Promise.all(workers);
});

test('addRateLimited backs off exponentially per key, capped, and forget resets it', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock, baseDelayMs: 5, maxDelayMs: 40 });
  const delays: number[] = [];
  for (let i = 0; i < 6; i++) {
    q.addRateLimited('a');
    let waited = 0;
    while (q.len() === 0) {
      clock.advance(1);
      waited++;
    }
    delays.push(waited);
    assert.deepEqual(await drain(q), ['a']);
  }
  assert.deepEqual(delays, [5, 10, 20, 40, 40, 40]);
  assert.equal(q.numRequeues('a'), 6);
  assert.equal(q.numRequeues('b'), 0, 'backoff is per key');
  q.forget('a');
  assert.equal(q.numRequeues('a'), 0);
  q.addRateLimited('a');
  clock.advance(4);
  assert.equal(q.len(), 0);
  clock.advance(1);
  assert.equal(q.len(), 1, 'back to the base delay after forget');
});

test('the default backoff starts at 5 ms and is capped at 1000 s', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  q.addRateLimited('a');
  clock.advance(4);
  assert.equal(q.len(), 0);
  clock.advance(1);
  assert.equal(q.len(), 1);
  await drain(q);
  for (let i = 0; i < 25; i++) {
    q.addRateLimited('b');
    clock.advance(1_000_000);
    assert.deepEqual(await drain(q), ['b']);
  }
  q.addRateLimited('b');
  clock.advance(999_999);
  assert.equal(q.len(), 0, 'b still waits just under 1000 s');
  clock.advance(1);
  assert.equal(q.len(), 1);
});

test('addAfter hands keys out in order of due time; the earliest delay of a key wins', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  q.addAfter('a', 30);
  q.addAfter('b', 10);
  q.addAfter('c', 20);
  q.addAfter('c', 50);
  clock.advance(9);
  assert.equal(q.len(), 0);
  clock.advance(21);
  assert.deepEqual(await drain(q), ['b', 'c', 'a']);
  q.addAfter('d', 100);
  q.addAfter('d', 10);
  clock.advance(10);
  assert.deepEqual(await drain(q), ['d']);
  clock.advance(200);
  assert.equal(q.len(), 0, 'the superseded longer delay does not fire again');
  assert.equal(clock.pending(), 0);
  q.addAfter('e', 0);
  assert.equal(q.len(), 1, 'a zero delay adds at once');
});

test('keys due at the same time share one timer', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  for (const k of ['a', 'b', 'c']) q.addAfter(k, 20);
  q.addAfter('d', 30);
  assert.equal(clock.pending(), 2);
  q.addAfter('d', 20);
  assert.equal(clock.pending(), 1, "d's earlier delay joins a, b and c; its later timer, now empty, is disarmed");
  clock.advance(19);
  assert.equal(q.len(), 0);
  clock.advance(1);
  assert.deepEqual(await drain(q), ['a', 'b', 'c', 'd']);
  assert.equal(clock.pending(), 0);
});

test('with slotMs, a delay of ten slots or more is rounded up to the end of its slot; shorter ones stay exact', async () => {
  const clock = new FakeClock({ start: 1_000_250 });
  const q = new WorkQueue({ clock, slotMs: 1000 });
  // 5,000 nodes' rechecks due at times spread over 30-33 s: one timer per second, not one per key.
  for (let i = 0; i < 5000; i++) q.addAfter(`node-${i}`, 30_000 + Math.floor((i * 3000) / 5000));
  assert.equal(clock.pending(), 4, 'due at 1,030,250-1,033,249 ms: slots ending at 1,031,000 to 1,034,000');
  q.addAfter('retry', 5);
  q.addAfter('soon', 9_999);
  assert.equal(clock.pending(), 6, 'delays under ten slots get their own exact timers');
  clock.advance(5);
  assert.deepEqual(await drain(q), ['retry']);
  clock.advance(9_993);
  assert.equal(q.len(), 0);
  clock.advance(1);
  assert.deepEqual(await drain(q), ['soon']);

  // The first key, due at 1,030,250, is not added before it is due, and comes with the rest of its slot.
  clock.advance(1_030_249 - clock.now());
  assert.equal(q.len(), 0);
  clock.advance(1_030_999 - clock.now());
  assert.equal(q.len(), 0, 'a slot fires at its end');
  clock.advance(1);
  const first = await drain(q);
  assert.equal(first.length, 1252, 'the keys due in 1,030,250-1,031,000 ms');
  assert.equal(first[0], 'node-0');
  clock.advance(3000);
  assert.equal((await drain(q)).length, 3748);
  assert.equal(clock.pending(), 0);

  // The earliest delay of a key still wins across slots, and shutDown disarms the slots.
  q.addAfter('x', 60_000);
  q.addAfter('x', 20_000);
  q.addAfter('y', 40_000);
  assert.equal(clock.pending(), 2, "x's later slot held no other key and was disarmed");
  q.shutDown();
  assert.equal(clock.pending(), 0);
  assert.throws(() => new WorkQueue({ slotMs: 0 }), /slotMs must be positive/);
});

test('shutDown drains queued keys, then get resolves undefined; later adds are ignored', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  const waiting = q.get();
  q.add('a');
  assert.equal(await waiting, 'a');
  q.add('b');
  q.addAfter('c', 10);
  q.shutDown();
  assert.equal(q.isShuttingDown(), true);
  assert.equal(clock.pending(), 0, 'delayed adds are dropped');
  q.add('d');
  q.addRateLimited('e');
  assert.equal(await q.get(), 'b', 'queued keys are still handed out');
  q.done('b');
  assert.equal(await q.get(), undefined);
  q.done('a');

  const idle = new WorkQueue({ clock });
  const blocked = [idle.get(), idle.get()];
  idle.shutDown();
  assert.deepEqual(await Promise.all(blocked), [undefined, undefined], 'waiting workers are released');
});

test('busy while a key is queued or in process, not while only delayed; idle() resolves when the last one is done', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  assert.equal(q.busy(), false);
  let idled = 0;
  await q.idle().then(() => idled++);
  assert.equal(idled, 1, 'an idle queue resolves at once');
  q.addAfter('later', 1000);
  assert.equal(q.busy(), false, 'a delayed key is not work yet');
  q.add('a');
  q.add('b');
  assert.equal(q.busy(), true);
  void q.idle().then(() => idled++);
  const a = (await q.get()) as string;
  q.add(a); // dirty: queued again at done
  q.done(a);
  const b = (await q.get()) as string;
  const again = (await q.get()) as string;
  q.done(b);
  await settle();
  assert.equal(idled, 1, `not idle while ${again} is in process`);
  assert.equal(q.busy(), true);
  q.done(again);
  await settle();
  assert.equal(idled, 2, 'idle once the last key in process is done');
  assert.equal(q.busy(), false);
  clock.advance(1000);
  assert.equal(q.busy(), true, 'the delayed key fell due');
});
