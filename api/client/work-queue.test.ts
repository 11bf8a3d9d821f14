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
