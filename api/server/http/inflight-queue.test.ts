import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { FakeClock } from '../../meta/fake-clock.ts';
import { ApiError } from '../../meta/api-error.ts';
import { InflightLimiter, type InflightLimits } from './inflight.ts';

const limiter = (limits: Partial<InflightLimits>, clock = new FakeClock()) =>
  new InflightLimiter({ limits: { maxRequestsInflight: 2, maxRequestsInflightPerClient: 10, ...limits }, clock });

/** A response: closing it releases its slot, or takes it out of the queue. */
const response = () => new EventEmitter();

/** Admits a request; records when its wait ended (`started`, or the error it ended with). */
function admit(l: InflightLimiter, client: string, log: string[], name: string) {
  const res = response();
  const waited = l.admit(res, client, false);
  if (!waited) log.push(`${name} started`);
  else
    waited.then(
      () => log.push(`${name} started`),
      (e: unknown) => log.push(`${name} ${e instanceof ApiError ? e.code : 'error'}`),
    );
  return res;
}

const settled = () => new Promise((r) => setImmediate(r));

test('requests over the total start in arrival order as slots free', async () => {
  const l = limiter({});
  const log: string[] = [];
  const running = [admit(l, 'a', log, 'r1'), admit(l, 'b', log, 'r2')];
  const waiting = [admit(l, 'c', log, 'w1'), admit(l, 'a', log, 'w2'), admit(l, 'b', log, 'w3')];
  await settled();
  assert.deepEqual(log, ['r1 started', 'r2 started']);
  assert.equal(l.stats().requestsQueued, 3);
  running[1].emit('close');
  await settled();
  assert.deepEqual(log.slice(2), ['w1 started'], 'one slot freed, the first waiting started');
  running[0].emit('close');
  waiting[0].emit('close');
  await settled();
  assert.deepEqual(log.slice(3), ['w2 started', 'w3 started']);
  assert.deepEqual(l.stats(), {
    requestsInflight: 2,
    requestsQueued: 0,
    watchesOpen: 0,
    rejectedRequests: 0,
    rejectedWatches: 0,
  });
  // A new request while slots are busy waits behind nobody, and starts when one frees.
  const late = admit(l, 'd', log, 'late');
  waiting[1].emit('close');
  await settled();
  assert.deepEqual(log.slice(5), ['late started']);
  for (const r of [waiting[2], late]) r.emit('close');
  assert.equal(l.stats().requestsInflight, 0);
});

test('a waiting request is refused (429) once it waited maxQueueWaitMs, and leaves the queue', async () => {
  const clock = new FakeClock();
  const l = limiter({ maxRequestsInflight: 1, maxQueueWaitMs: 15_000 }, clock);
  const log: string[] = [];
  const running = admit(l, 'a', log, 'r1');
  admit(l, 'b', log, 'w1');
  clock.advance(10_000);
  admit(l, 'c', log, 'w2');
  clock.advance(5_000);
  await settled();
  assert.deepEqual(log, ['r1 started', 'w1 429'], 'w1 waited 15 s; w2 only 5 s');
  assert.equal(l.stats().requestsQueued, 1);
  assert.equal(l.stats().rejectedRequests, 1);
  running.emit('close');
  await settled();
  assert.deepEqual(log.slice(2), ['w2 started'], 'the refused request took no slot');
});

test('a request whose client went away while it waited leaves the queue and its timer', async () => {
  const clock = new FakeClock();
  const l = limiter({ maxRequestsInflight: 1, maxRequestsInflightPerClient: 2 }, clock);
  const log: string[] = [];
  const running = admit(l, 'a', log, 'r1');
  const gone = admit(l, 'b', log, 'gone');
  admit(l, 'b', log, 'w2');
  assert.throws(
    () => l.admit(response(), 'b', false),
    /too many requests in flight/,
    "b's waiting requests count as its own",
  );
  gone.emit('close');
  assert.equal(l.stats().requestsQueued, 1);
  admit(l, 'b', log, 'w3');
  running.emit('close');
  clock.advance(60_000);
  await settled();
  assert.deepEqual(log, ['r1 started', 'w2 started', 'w3 429'], 'gone neither started nor was refused');
});

test('a full queue refuses at once; exempt requests (the admin) neither wait nor count in the total', () => {
  const l = limiter({ maxRequestsInflight: 1, maxRequestsQueued: 1 });
  const log: string[] = [];
  admit(l, 'a', log, 'r1');
  admit(l, 'b', log, 'w1');
  assert.throws(
    () => l.admit(response(), 'c', false),
    (e: unknown) => e instanceof ApiError && e.code === 429 && e.details?.retryAfterSeconds === 1,
  );
  assert.equal(l.admit(response(), 'admin', false, 'total'), undefined, 'the admin starts at once');
  assert.deepEqual([l.stats().requestsInflight, l.stats().requestsQueued], [2, 1]);
});
