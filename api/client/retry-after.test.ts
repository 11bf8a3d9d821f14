import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type ClientRequest } from 'node:http';
import { ApiError } from '../meta/api-error.ts';
import { FakeClock } from '../meta/fake-clock.ts';
import { eventually } from '../../test/eventually.ts';
import { serverSuite } from '../../test/server-suite.ts';
import { createClient } from './http-client.ts';

const s = serverSuite({ insecure: true, inflight: { maxRequestsInflightPerClient: 1, retryAfterSeconds: 3 } });

/** A POST whose body never comes: it holds the admin's one in-flight slot until destroyed. */
function holdSlot(): ClientRequest {
  const u = new URL('/apis/meshctl.dev/v1alpha1/nodes', s.server.url);
  const headers = { authorization: `Bearer ${s.server.adminToken}`, 'content-length': 100 };
  const r = request({ hostname: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers });
  r.on('error', () => {});
  r.flushHeaders();
  return r;
}

/** Waits until the client sleeps on its clock, i.e. it got a 429 and waits for Retry-After. */
async function waiting(clock: FakeClock): Promise<void> {
  await eventually(async () => assert.equal(clock.pending(), 1, 'the client waits'));
}

test('the client sends a 429 request again after Retry-After, on its clock', async () => {
  const held = holdSlot();
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 1, 'held'));
  const clock = new FakeClock();
  const client = createClient({ ...s.server.config, clock });
  const listed = client.list('nodes');
  await waiting(clock);
  const refused = s.server.app.stats().rejectedRequests;
  held.destroy();
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 0, 'released'));
  clock.advance(2999);
  assert.equal(clock.pending(), 1, 'not before Retry-After');
  clock.advance(1);
  assert.equal((await listed).kind, 'NodeList');
  assert.equal(s.server.app.stats().rejectedRequests, refused, 'answered on the first retry');
  client.close();
});

test('the client gives up with TooManyRequests after maxRetries', async () => {
  const held = holdSlot();
  await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 1, 'held'));
  const clock = new FakeClock();
  const client = createClient({ ...s.server.config, clock, maxRetries: 2 });
  const refusedBefore = s.server.app.stats().rejectedRequests;
  const listed = client.list('nodes').catch((e: unknown) => e);
  for (let i = 0; i < 2; i++) {
    await waiting(clock);
    clock.advance(3000);
  }
  const e = await listed;
  assert.ok(e instanceof ApiError, String(e));
  assert.equal(e.reason, 'TooManyRequests');
  assert.equal(e.code, 429);
  assert.equal(s.server.app.stats().rejectedRequests - refusedBefore, 3, 'the first try and two retries');
  held.destroy();
  client.close();
});

test('with retryJitter the wait after a 429 is Retry-After to (1 + retryJitter) times it, never less', async () => {
  for (const [draw, waits] of [
    [0, 3000],
    [0.999, 5997],
  ] as const) {
    const held = holdSlot();
    await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 1, 'held'));
    const clock = new FakeClock();
    const client = createClient({ ...s.server.config, clock, retryJitter: 1, random: () => draw });
    const listed = client.list('nodes');
    await waiting(clock);
    held.destroy();
    await eventually(async () => assert.equal(s.server.app.stats().requestsInflight, 0, 'released'));
    clock.advance(waits - 1);
    assert.equal(clock.pending(), 1, `draw ${draw}: not before ${waits} ms`);
    clock.advance(1);
    assert.equal((await listed).kind, 'NodeList', `draw ${draw}: retried at ${waits} ms`);
    client.close();
  }
});
