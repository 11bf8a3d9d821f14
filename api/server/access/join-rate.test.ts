// POST /join is rate-limited per source address and overall, before the body is read: 429 TooManyRequests
// with Retry-After, and the next attempt goes through once the clock has moved on (a FakeClock).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../meta/fake-clock.ts';
import { startServer, type TestServer } from '../../../test/harness.ts';
import { newNodeKey, postJoin } from '../../../test/e2e/join-helpers.ts';
import { JOIN_RATE, type JoinRate } from './join-handler.ts';

async function serve(t: TestContext, clock: FakeClock, joinRate?: JoinRate): Promise<TestServer> {
  const srv = await startServer({ insecure: true, meshAccess: true, clock, ...(joinRate ? { joinRate } : {}) });
  t.after(() => srv.stop());
  return srv;
}

const badJoin = (srv: TestServer) =>
  postJoin(srv.config, { token: 'abcdef.0123456789abcdef', nodeName: 'n1', nodeKey: newNodeKey() });

test('one address gets the default burst of join attempts, then 429 with Retry-After until a token refills', async (t) => {
  const clock = new FakeClock();
  const srv = await serve(t, clock);
  for (let i = 0; i < JOIN_RATE.perAddress.burst; i++) assert.equal((await badJoin(srv)).status, 401, `attempt ${i}`);
  const limited = await badJoin(srv);
  assert.equal(limited.status, 429, limited.text);
  assert.equal(limited.json.reason, 'TooManyRequests');
  assert.match(limited.json.message, /too many join attempts from /);
  const wait = 60 / JOIN_RATE.perAddress.perMinute;
  assert.equal(limited.headers['retry-after'], String(wait));
  assert.equal(limited.json.details.retryAfterSeconds, wait);
  clock.advance(wait * 1000 - 1);
  assert.equal((await badJoin(srv)).status, 429);
  clock.advance(1);
  assert.equal((await badJoin(srv)).status, 401);
  assert.equal((await badJoin(srv)).status, 429);
});

test('all addresses together are limited too', async (t) => {
  const clock = new FakeClock();
  const many = { perMinute: 1000, burst: 1000 };
  const srv = await serve(t, clock, { perAddress: many, overall: { perMinute: 60, burst: 3 } });
  for (let i = 0; i < 3; i++) assert.equal((await badJoin(srv)).status, 401);
  const limited = await badJoin(srv);
  assert.equal(limited.status, 429);
  assert.equal(limited.json.message, 'too many join attempts; try again later');
  assert.equal(limited.headers['retry-after'], '1');
  clock.advance(1000);
  assert.equal((await badJoin(srv)).status, 401);
});
