// While the control plane is unreachable the Declaration watch backs off to 30 s (declaration-watch.ts
// RECONNECT_MAX_MS); what brings it back sooner is the heartbeat: the first one that gets through wakes the watch,
// which lists at once. That heartbeat is the return's: no second one follows it, as one does when another request
// found the control plane back. Real server and agent store; the heartbeat's and the watch's timers run on the fake
// clock, and the control plane is "down" by sending the calls to a port nobody listens on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import type { Client } from '../../api/client/types.ts';
import { FakeClock, settle } from '../../api/meta/fake-clock.ts';
import { silentLogger } from '../../api/meta/logger.ts';
import { eventually } from '../../test/eventually.ts';
import { startServer } from '../../test/harness.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import { openAgentStore, type AgentStore } from '../store/agent-store.ts';
import { freePort, putDeclaration } from '../testing.ts';
import { createReachability } from './reachability.ts';
import { createSync, type SyncOptions } from './sync.ts';

const HEARTBEAT_MS = 2000;

/** Waits until `cond` holds (real time; the fake clock is advanced only by the test). */
const until = (what: string, cond: () => boolean): Promise<void> =>
  eventually(async () => assert.ok(cond(), `waiting for: ${what}`), { timeoutMs: 20_000 });

/** Node `a`'s reachability tracker and link to the control plane over `client`, on the fake clock (`more` overrides). */
function link(o: { client: Client; store: AgentStore; server: string; clock: FakeClock } & Partial<SyncOptions>) {
  const { client, store, server, clock, ...more } = o;
  const reach = createReachability({ store, logger: silentLogger, node: 'a', server, now: () => clock.now() });
  const sync = createSync({
    client,
    node: 'a',
    store,
    reach,
    logger: silentLogger,
    agentVersion: 'test',
    clock,
    heartbeatIntervalMs: HEARTBEAT_MS,
    state: { declaration: () => undefined, run: () => undefined, appliedGeneration: () => undefined },
    onDeclaration: async () => {},
    ...more,
  });
  return { reach, sync };
}

test('after an outage the first heartbeat that gets through wakes the watch, long before its own retry', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-sync-'));
  const server = await startServer({ insecure: true });
  const live = createClient(server.config);
  const dead = createClient({ server: `http://127.0.0.1:${await freePort()}` }); // nobody listens there
  const store = await openAgentStore({ stateDir: dir, logger: silentLogger });
  let down = true;
  const lists = { dead: 0, live: 0 };
  let failures = 0;
  // Every call goes to the dead port while `down`; the Declaration lists (the watch's attempts) are counted.
  const client = new Proxy(live, {
    get(target, key) {
      if (key === 'list')
        return ((plural, opts) => {
          if (down) lists.dead++;
          else lists.live++;
          return (down ? dead : live).list(plural, opts).catch((e: unknown) => {
            failures++;
            throw e;
          });
        }) satisfies Client['list'];
      const to = down ? dead : target;
      const v: unknown = Reflect.get(to, key);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(to) : v;
    },
  });
  const clock = new FakeClock();
  const { reach, sync } = link({ client, store, server: server.url, clock });
  t.after(async () => {
    await sync.stop();
    reach.close();
    await store.close();
    live.close();
    dead.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  sync.start();
  await until('the first watch attempt failed', () => failures === 1);
  // Two minutes down, a second at a time: the watch's delays grow to their cap.
  for (let s = 0; s < 120; s++) {
    clock.advance(1000);
    await settle(5);
    await until('the attempt failed', () => failures === lists.dead);
  }
  const attempts = lists.dead;
  // 1 + 7 doubling delays (0.125–0.25 s … 8–16 s) + 2 to 6 at the cap (15–30 s); at a 5 s cap it would be 30 or more.
  assert.ok(attempts >= 9 && attempts <= 14, `the watch tried ${attempts} times in two minutes`);
  // Back: right after one of the watch's attempts failed, so that its next one is at least 15 s away.
  while (lists.dead === attempts) {
    clock.advance(100);
    await settle(5);
  }
  await until('the attempt failed', () => failures === lists.dead);
  down = false;
  clock.advance(HEARTBEAT_MS * 1.1); // the next heartbeat is due within this
  await until('the watch to list again, woken by the heartbeat', () => lists.live > 0);
  assert.equal(reach.reachable(), true);
});

/**
 * Node `a`'s link on the fake clock with its heartbeats counted (`beats`) and each tick observed: `tickAfter(ms)`
 * advances the clock to the next tick, which must start exactly then, and waits until it is done.
 */
async function beating(t: { after(fn: () => Promise<void>): void }, state: SyncOptions['state']) {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-sync-'));
  const server = await startServer({ insecure: true });
  const admin = createClient(server.config);
  const store = await openAgentStore({ stateDir: dir, logger: silentLogger });
  let beats = 0;
  const client: Client = {
    ...admin,
    patch: (plural, name, body, opts) => {
      if (plural === 'nodes' && opts?.subresource === 'status') beats++;
      return admin.patch(plural, name, body, opts);
    },
  };
  const clock = new FakeClock();
  // Ticks started (synchronously, as the clock fires them) and done (their next one armed right after the draw).
  let started = 0;
  let done = 0;
  const { reach, sync } = link({
    client,
    store,
    server: server.url,
    clock,
    beforeHeartbeat: async () => void started++,
    random: () => (done++, 0.5), // no spread: each heartbeat is due exactly an interval later
    state,
  });
  t.after(async () => {
    await sync.stop();
    reach.close();
    await store.close();
    admin.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const tickAfter = async (ms: number): Promise<void> => {
    const n = started;
    clock.advance(ms - 1);
    assert.equal(started, n, `no heartbeat before ${ms} ms`);
    clock.advance(1);
    assert.equal(started, n + 1, `the heartbeat at ${ms} ms`);
    await until('the tick to end', () => done === n + 1);
  };
  sync.start();
  await until('the first heartbeat', () => done === 1);
  return { admin, reach, sync, clock, tickAfter, beats: () => beats };
}

test('a heartbeat that would repeat the last one is skipped after another request renewed the lease, never twice in a row', async (t) => {
  let applied: number | undefined;
  const { admin, reach, clock, tickAfter, beats } = await beating(t, {
    declaration: () => undefined,
    run: () => undefined,
    appliedGeneration: () => applied,
  });
  assert.equal(beats(), 1);
  await tickAfter(HEARTBEAT_MS);
  assert.equal(beats(), 2, 'nothing else was answered since the last one: written');

  clock.advance(300);
  reach.succeeded(); // a log POST answered, just after the heartbeat
  await tickAfter(HEARTBEAT_MS - 300);
  assert.equal(beats(), 2, 'renewed by the log POST and nothing new to say: skipped');
  await tickAfter(HEARTBEAT_MS); // the ticks keep their pace: an interval after the skipped one
  assert.equal(beats(), 3, 'written: nothing renewed the lease since the last one');

  clock.advance(HEARTBEAT_MS / 2);
  reach.succeeded(); // half an interval after it
  await tickAfter(HEARTBEAT_MS / 2);
  assert.equal(beats(), 3, 'skipped');
  reach.succeeded();
  await tickAfter(HEARTBEAT_MS);
  assert.equal(beats(), 4, 'renewed again, but never two skipped in a row');

  reach.succeeded();
  applied = 7;
  await tickAfter(HEARTBEAT_MS);
  assert.equal(beats(), 5, 'renewed, but with news (the applied generation): written');

  reach.succeeded('watch'); // a bookmark on the Declaration watch: no request the control plane heard
  await tickAfter(HEARTBEAT_MS);
  assert.equal(beats(), 6, "the watch's events renew nothing");
  assert.equal((await admin.get('nodes', 'a')).status?.declaration?.appliedGeneration, 7);
});

test('an apply the Declaration status reported is no news for the next heartbeat', async (t) => {
  let decl: Declaration | undefined;
  let applied: number | undefined;
  const { admin, reach, sync, clock, tickAfter, beats } = await beating(t, {
    declaration: () => decl,
    run: () => undefined,
    appliedGeneration: () => applied,
  });
  const file = { id: 'm/conf', owner: 'm', kind: 'File' as const, spec: { path: '/srv/m', content: 'x\n' } };
  decl = await putDeclaration(admin, 'a', 7, [file]);
  applied = 7;
  clock.advance(500);
  await sync.reporter.reportDeclaration(); // the apply's report, answered: it renewed the lease too
  assert.equal((await admin.get('declarations', 'a')).status?.appliedGeneration, 7);
  await tickAfter(HEARTBEAT_MS - 500);
  assert.equal(beats(), 1, 'the control plane has generation 7 from the Declaration status: skipped');
  await tickAfter(HEARTBEAT_MS);
  assert.equal(beats(), 2, 'never two skipped in a row');
  assert.equal((await admin.get('nodes', 'a')).status?.declaration?.appliedGeneration, 7);

  decl = await putDeclaration(admin, 'a', 8, [file]);
  applied = 8; // applied, not yet in the Declaration status
  reach.succeeded(); // a log POST answered
  await tickAfter(HEARTBEAT_MS);
  assert.equal(beats(), 3, 'renewed, but generation 8 is news: written');
  assert.equal((await admin.get('nodes', 'a')).status?.declaration?.appliedGeneration, 8);
});

test('a return the heartbeat found costs no second heartbeat; one another request found is followed by one at once', async (t) => {
  const { admin, reach, tickAfter, beats } = await beating(t, {
    declaration: () => undefined,
    run: () => undefined,
    appliedGeneration: () => undefined,
  });
  const dead = createClient({ server: `http://127.0.0.1:${await freePort()}` }); // nobody listens there
  t.after(() => dead.close());
  const refused: unknown = await dead.get('nodes', 'a').then(
    () => assert.fail('nobody listens there'),
    (e: unknown) => e,
  );
  const returns = async (): Promise<number> =>
    (await admin.list('events')).items.filter((e) => e.reason === 'ControlPlaneUnreachable').length;
  assert.equal(beats(), 1);

  assert.equal(reach.failed(refused), true, 'a call failed to reach the control plane');
  await tickAfter(HEARTBEAT_MS); // this heartbeat gets through: it finds the control plane back
  await eventually(async () => assert.equal(await returns(), 1, 'the outage reported'));
  assert.equal(beats(), 2, "the tick's heartbeat told the control plane the node is back: no second one");

  assert.equal(reach.failed(refused), true);
  reach.succeeded(); // a log POST got through first
  await eventually(async () => assert.equal(await returns(), 2, 'the outage reported'));
  assert.equal(beats(), 3, 'a heartbeat at once, before the next tick');
});
