import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../api/meta/fake-clock.ts';
import { createRetryTracker, RETRY_MAX_MS } from './retry.ts';

test('retry: the delay doubles from 1 s and is capped at 30 s; a success resets it', () => {
  const clock = new FakeClock();
  const retry = createRetryTracker({ clock });
  const delays: number[] = [];
  for (let i = 0; i < 10; i++) {
    retry.failed('a', 'boom');
    let waited = 0;
    while (retry.waiting('a') !== undefined) {
      clock.advance(500);
      waited += 500;
    }
    delays.push(waited);
  }
  assert.equal(RETRY_MAX_MS, 30_000);
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000, 30_000]);
  retry.succeeded('a');
  retry.failed('a', 'boom');
  clock.advance(999);
  assert.match(retry.waiting('a') ?? '', /after 1 failure\(s\); last error: boom/);
  clock.advance(1);
  assert.equal(retry.waiting('a'), undefined);
});

test('retry: reset() makes every waiting resource due at once and restarts its delay at 1 s', () => {
  const clock = new FakeClock();
  const retry = createRetryTracker({ clock });
  for (let i = 0; i < 6; i++) retry.failed('a', 'boom');
  retry.failed('remove:b', 'busy');
  assert.match(retry.waiting('a') ?? '', /after 6 failure\(s\)/);
  assert.notEqual(retry.waiting('remove:b'), undefined);
  retry.reset();
  assert.equal(retry.waiting('a'), undefined);
  assert.equal(retry.waiting('remove:b'), undefined);
  retry.failed('a', 'again');
  assert.match(retry.waiting('a') ?? '', /after 1 failure\(s\); last error: again/);
  clock.advance(1000);
  assert.equal(retry.waiting('a'), undefined);
});
