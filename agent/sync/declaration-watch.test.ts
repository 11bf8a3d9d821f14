// The agent's Declaration watch reconnects with jittered backoff by default (RECONNECT_JITTER): on the fake clock,
// against a port nobody listens on, the first retry comes within [250 * (1 - 0.5), 250] ms as the random draw
// says, so the agents of a restarted control plane do not all come back in the same millisecond; the delays grow to
// RECONNECT_MAX_MS, and wake() (the heartbeat got through) retries at once. Against a real server, the agent's own
// status writes do not come back to it on the watch (omitStatusUpdates).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { createClient } from '../../api/client/http-client.ts';
import type { Client } from '../../api/client/types.ts';
import { FakeClock, settle } from '../../api/meta/fake-clock.ts';
import { silentLogger } from '../../api/meta/logger.ts';
import { DEFAULT_WATCH_HEARTBEAT_MS } from '../../api/server/resources/watch.ts';
import { startServer } from '../../test/harness.ts';
import { putDeclaration } from '../testing.ts';
import { DEFAULT_WATCH_IDLE_TIMEOUT_MS, RECONNECT_MAX_MS, startDeclarationWatch } from './declaration-watch.ts';
import type { Reachability } from './reachability.ts';

/** A loopback port that refuses connections (listened on, then closed). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Reachability that only counts failures (the watch's own behaviour is what is tested). */
function countingReach(): Reachability & { failures: number } {
  const r = {
    failures: 0,
    succeeded() {},
    failed() {
      r.failures++;
      return true;
    },
    reachable: () => false,
    unreachableSince: () => undefined,
    lastContact: () => undefined,
    lastAnswered: () => undefined,
    unreachableSeconds: () => 0,
    onReturn() {},
    close() {},
  };
  return r;
}

async function until(what: string, cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await settle();
  }
}

/**
 * Runs the watch with `random` and returns the attempts seen after advancing the fake clock by each of `steps` (a
 * step of 0 calls the watch's `wake()` instead).
 */
async function attemptsAfter(random: () => number, steps: number[]): Promise<number[]> {
  const real = createClient({ server: `http://127.0.0.1:${await closedPort()}` });
  let lists = 0;
  const client: Client = { ...real, list: (plural, opts) => (lists++, real.list(plural, opts)) };
  const clock = new FakeClock();
  const reach = countingReach();
  const watch = startDeclarationWatch({
    client,
    node: 'a',
    reach,
    logger: silentLogger,
    onDeclaration: async () => {},
    clock,
    backoff: { random },
  });
  const seen: number[] = [];
  try {
    await until('the first attempt failed', () => reach.failures === 1);
    for (const ms of steps) {
      if (ms === 0) watch.wake();
      else clock.advance(ms);
      const before = reach.failures;
      await settle(10);
      if (lists > before) await until('the retry failed', () => reach.failures === lists);
      seen.push(lists);
    }
  } finally {
    await watch.stop();
    real.close();
  }
  return seen;
}

test('with the default jitter the first retry comes after 125 ms when the draw says so, never before', async () => {
  // random → 1: the shortest delay, 250 * (1 - 0.5) = 125 ms.
  assert.deepEqual(await attemptsAfter(() => 0.999999, [124, 2]), [1, 2]);
});

test('with the default jitter the first retry waits the whole 250 ms when the draw says so', async () => {
  // random → 0: the longest delay, 250 ms.
  assert.deepEqual(await attemptsAfter(() => 0, [126, 123, 2]), [1, 1, 2]);
});

test('retries back off to RECONNECT_MAX_MS (30 s) and stay there; wake() ends a pause at once', async () => {
  // random → 0: each delay whole. 250 ms doubling: 250, 500, …, 16 s, then 30 s, 30 s.
  const doubling = [250, 500, 1000, 2000, 4000, 8000, 16_000];
  const seen = await attemptsAfter(() => 0, [...doubling, 29_999, 1, 29_999, 1, 0, 249, 1]);
  assert.equal(RECONNECT_MAX_MS, 30_000);
  assert.deepEqual(seen, [2, 3, 4, 5, 6, 7, 8, 8, 9, 9, 10, 11, 11, 12]);
});

test("the server's default watch keep-alive leaves the agent's idle timeout room for one late beat", () => {
  assert.ok(
    DEFAULT_WATCH_HEARTBEAT_MS * 2 <= DEFAULT_WATCH_IDLE_TIMEOUT_MS,
    `keep-alive every ${DEFAULT_WATCH_HEARTBEAT_MS} ms, idle timeout ${DEFAULT_WATCH_IDLE_TIMEOUT_MS} ms`,
  );
  assert.ok(DEFAULT_WATCH_HEARTBEAT_MS >= 30_000, 'each beat is a write to every idle watch: not more often');
});

test("the agent's own status writes do not come back on its watch; the next spec does (a real server)", async (t) => {
  const srv = await startServer();
  t.after(() => srv.stop());
  const admin = createClient(srv.config);
  t.after(() => admin.close());
  await putDeclaration(admin, 'a', 1, []);
  const seen: string[] = [];
  const watch = startDeclarationWatch({
    client: admin,
    node: 'a',
    reach: countingReach(),
    logger: silentLogger,
    onDeclaration: async (d) => void seen.push(`${d.spec.generation} ${d.metadata.resourceVersion}`),
  });
  t.after(() => watch.stop());
  await until('the list', () => seen.length === 1);
  // The watch is open once the loop has listed and asked for it: a status write now is after the list's version.
  const status = await admin.patch(
    'declarations',
    'a',
    { status: { appliedGeneration: 1 } },
    { subresource: 'status' },
  );
  const next = await putDeclaration(admin, 'a', 2, []);
  await until('the next spec', () => seen.length >= 2);
  assert.deepEqual(seen.slice(1), [`2 ${next.metadata.resourceVersion}`], 'the status write was no event');
  assert.ok(Number(status.metadata.resourceVersion) < Number(next.metadata.resourceVersion));
});
