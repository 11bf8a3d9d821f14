// Backoff's jitter: every delay lies within [d * (1 - jitter), d] of the exponential delay d, the randomness is
// drawn per delay (clients that failed together spread out), and no jitter keeps the exact delays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff, jittered, spreadAround } from './clock.ts';

test('without jitter the delays are exactly base * 2^n, capped', () => {
  const b = new Backoff({ baseMs: 250, maxMs: 5000 });
  assert.deepEqual(
    Array.from({ length: 7 }, () => b.next()),
    [250, 500, 1000, 2000, 4000, 5000, 5000],
  );
});

test('a jittered delay lies within [d * (1 - jitter), d]: the bounds are reached at random 1 and 0', () => {
  assert.equal(
    jittered(1000, 0.5, () => 0),
    1000,
  );
  assert.equal(
    jittered(1000, 0.5, () => 0.999999),
    1000 * (1 - 0.5 * 0.999999),
  );
  const low = new Backoff({ baseMs: 250, maxMs: 5000, jitter: 0.5, random: () => 0.999999 });
  const high = new Backoff({ baseMs: 250, maxMs: 5000, jitter: 0.5, random: () => 0 });
  const exact = [250, 500, 1000, 2000, 4000, 5000];
  for (const d of exact) {
    assert.ok(Math.abs(low.next() - d * 0.5) < 0.01, `lowest delay for ${d} is half of it`);
    assert.equal(high.next(), d, `highest delay for ${d} is ${d}`);
  }
});

test('1,000 clients that failed together spread their retries over the jitter window', () => {
  const firsts = Array.from({ length: 1000 }, () => new Backoff({ baseMs: 4000, maxMs: 4000, jitter: 0.5 }).next());
  for (const d of firsts) assert.ok(d >= 2000 && d <= 4000, `delay ${d} within [2000, 4000]`);
  const buckets = new Set(firsts.map((d) => Math.floor(d / 100)));
  assert.ok(buckets.size >= 15, `the retries spread over ${buckets.size} of 20 100-ms buckets`);
  const b = new Backoff({ baseMs: 250, maxMs: 5000, jitter: 0.5 });
  assert.equal(b.peek(), 250, 'peek is the un-jittered upper bound');
});

test('a jitter outside [0, 1] is refused', () => {
  assert.throws(() => new Backoff({ baseMs: 1, maxMs: 2, jitter: 1.5 }), /jitter must be from 0 to 1/);
  assert.throws(() => new Backoff({ baseMs: 1, maxMs: 2, jitter: -0.1 }), /jitter must be from 0 to 1/);
});

test('a spread delay lies within [d * (1 - s), d * (1 + s)] around d; heartbeats in step drift apart', () => {
  assert.equal(
    spreadAround(10_000, 0.1, () => 0),
    9000,
  );
  assert.equal(
    spreadAround(10_000, 0.1, () => 0.5),
    10_000,
  );
  assert.ok(Math.abs(spreadAround(10_000, 0.1, () => 0.999999) - 11_000) < 0.01);
  // 1,000 agents heartbeating at the same moment (all resumed together), each next beat spread by ±10 %.
  let at = Array.from({ length: 1000 }, () => 0);
  const width = () => Math.max(...at) - Math.min(...at);
  for (let beat = 1; beat <= 5; beat++) {
    at = at.map((t) => t + spreadAround(10_000, 0.1));
    for (const t of at) assert.ok(t >= 9000 * beat && t <= 11_000 * beat, `beat ${beat} at ${t}`);
  }
  assert.ok(width() > 3000, `after five beats the burst is spread over ${width()} ms, not one moment`);
  const mean = at.reduce((a, b) => a + b, 0) / at.length;
  assert.ok(Math.abs(mean - 50_000) < 500, `the heartbeat rate is unchanged: mean of five intervals ${mean} ms`);
});
