import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '../../../test/eventually.ts';
import { FakeClock } from '../../meta/fake-clock.ts';
import type { LoopTime } from '../../meta/loop-time.ts';
import { startLoopBatching } from './loop-batching.ts';

/** A batcher over a fake clock, a fake loop time and a hold that only counts (its time is busy and held, as a real hold's). */
function harness(opts: { minPerSecond?: number } = {}) {
  const clock = new FakeClock();
  const work = { awaiting: 0 };
  const loop: LoopTime = { active: 0, idle: 0, held: 0 };
  let requests = 0;
  const holds: number[] = [];
  const batching = startLoopBatching({
    requests: () => requests,
    clock,
    loopTime: () => ({ ...loop }),
    hold: (ms) => {
      holds.push(ms);
      loop.active += ms;
      loop.held += ms;
      return ms;
    },
    holdMs: 20,
    busyBelow: 0.5,
    awaiting: () => work.awaiting,
    ...opts,
  });
  return {
    work,
    clock,
    loop,
    holds,
    batching,
    /** `n` requests spread over the next second, the loop busy `busyShare` of it. */
    second(n: number, busyShare = 0.1) {
      for (let ms = 0; ms < 1000; ms += 10) {
        requests += n / 100;
        loop.active += 10 * busyShare;
        loop.idle += 10 * (1 - busyShare);
        clock.advance(10);
      }
    },
    /** Batching on (a second at 150 requests) and one turn after it; returns the holds so far. */
    batchingAfterATurn(): number {
      this.second(150);
      this.turn(0, 0);
      return holds.length;
    },
    /** One turn of the loop after `busyMs` of work and `idleMs` of waiting since the last one. */
    turn(busyMs: number, idleMs: number) {
      loop.active += busyMs;
      loop.idle += idleMs;
      clock.advance(1);
    },
  };
}

test('below the request rate the loop never holds, and no turn timer runs', () => {
  const h = harness({ minPerSecond: 100 });
  for (let s = 0; s < 5; s++) h.second(99);
  assert.equal(h.holds.length, 0);
  assert.equal(h.batching.stats().batching, false);
  assert.equal(h.clock.pending(), 1, 'only the once-a-second rate check is armed');
  h.batching.stop();
});

test('at the request rate a mostly idle loop holds holdMs once per turn', () => {
  const h = harness({ minPerSecond: 100 });
  h.second(150);
  assert.equal(h.batching.stats().batching, true);
  const before = h.holds.length;
  for (let i = 0; i < 10; i++) h.turn(2, 5);
  assert.deepEqual(h.holds.slice(before), Array(10).fill(20));
  const stats = h.batching.stats();
  assert.equal(stats.holds, h.holds.length);
  assert.equal(stats.heldMs, 20 * h.holds.length);
  h.batching.stop();
});

test('the hold itself does not count as the loop being busy', () => {
  const h = harness();
  const before = h.batchingAfterATurn();
  // Since the last turn: its hold (20 ms, counted busy by the loop) and 15 ms of work — 15 of 35 ms busy, under half.
  h.turn(15, 0);
  assert.equal(h.holds.length, before + 1);
  h.batching.stop();
});

test('a loop busy half the time or more does not hold until it is less busy', () => {
  const h = harness();
  const before = h.batchingAfterATurn();
  h.turn(40, 0); // 40 of 60 ms (with the last hold) busy
  h.turn(30, 10);
  h.turn(10, 10);
  assert.equal(h.holds.length, before, 'no hold while busy');
  h.turn(4, 10);
  assert.equal(h.holds.length, before + 1);
  h.batching.stop();
});

test('no hold while work waits for the next turns (a journal commit)', () => {
  const h = harness();
  const before = h.batchingAfterATurn();
  h.work.awaiting = 1;
  for (let i = 0; i < 10; i++) h.turn(1, 5);
  assert.equal(h.holds.length, before, 'no hold while a commit is in flight');
  h.work.awaiting = 0;
  h.turn(1, 5);
  assert.equal(h.holds.length, before + 1);
  h.batching.stop();
});

test('when the rate falls the turns stop; stop() clears every timer', () => {
  const h = harness({ minPerSecond: 100 });
  h.second(200);
  assert.equal(h.batching.stats().batching, true);
  h.second(20);
  assert.equal(h.batching.stats().batching, false);
  const before = h.holds.length;
  for (let i = 0; i < 20; i++) h.turn(1, 5);
  assert.equal(h.holds.length, before, 'no hold once the rate is under the minimum');
  h.second(200);
  assert.equal(h.batching.stats().batching, true);
  h.batching.stop();
  assert.equal(h.clock.pending(), 0);
  assert.equal(h.batching.stats().batching, false);
});

test('the default hold blocks the thread about holdMs (Atomics.wait)', () => {
  const clock = new FakeClock();
  let requests = 0;
  // A loop that was never busy (this test runs without turning it), so that the turn holds.
  const loopTime = () => ({ active: 0, idle: 0, held: 0 });
  const batching = startLoopBatching({ requests: () => requests, clock, loopTime, holdMs: 30, minPerSecond: 1 });
  requests = 10;
  clock.advance(1000);
  const t0 = performance.now();
  clock.advance(1);
  const took = performance.now() - t0;
  assert.ok(took >= 29, `held ${took} ms`);
  const { holds, heldMs } = batching.stats();
  assert.equal(holds, 1);
  assert.ok(heldMs >= 29 && heldMs <= took + 1, `heldMs ${heldMs}`);
  batching.stop();
});

test('a real server under a steady stream of requests holds its loop and still answers every one', async (t) => {
  let handed = 0;
  const server = createServer((_req, res) => {
    handed++;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const batching = startLoopBatching({ requests: () => handed, minPerSecond: 50 });
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  t.after(() => {
    batching.stop();
    agent.destroy();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const once = () =>
    new Promise<number>((resolve, reject) => {
      get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      }).on('error', reject);
    });
  let sending = true;
  const codes: number[] = [];
  // 8 clients, each a request every ~25 ms: some 300 a second, well over the minimum.
  const clients = Array.from({ length: 8 }, async () => {
    while (sending) {
      codes.push(await once());
      await sleep(25);
    }
  });
  await eventually(
    async () => {
      const { batching: on, holds } = batching.stats();
      assert.ok(on && holds >= 20, `batching ${on}, ${holds} holds`);
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  sending = false;
  await Promise.all(clients);
  assert.ok(codes.length > 0);
  assert.deepEqual(new Set(codes), new Set([200]));
  assert.equal(handed, codes.length);
});
