/**
 * The Node controller against the real API server and store (in-process, port 0), through the real HTTP
 * client, run by the controller manager — with the controller's clock a FakeClock, so grace periods pass
 * in microseconds and when a node flips is checked to the millisecond: exactly at the end of its grace period for a
 * heartbeat heard at a whole second, at the next whole second otherwise (the recheck's slot). Heartbeats
 * are the agent's real write (a merge patch of Node status) carrying a deliberately wrong agent clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../api/meta/api-error.ts';
import { rfc3339 } from '../api/meta/timestamp.ts';
import { WorkQueue } from '../api/client/work-queue.ts';
import { eventually } from '../test/eventually.ts';
import { nodeControllerTesting, S, T0 } from './node-controller-testing.ts';

const iso = rfc3339;
const { suite, startController, quiet, statusOf, conditionOf, waitCondition, heartbeat, lastAgentClock, createNode } =
  nodeControllerTesting();

test("a heartbeat makes a node reachable at the control plane's time; silence flips it exactly when the grace period runs out", async (t) => {
  const { clock, writes } = await startController(t);
  await createNode('quiet');
  const never = await waitCondition('quiet', 'Reachable', 'Unknown', 'NeverSeen');
  assert.equal(never.reachable, undefined);
  assert.equal(never.lastSeen, undefined);

  clock.advance(5 * S);
  await heartbeat('quiet');
  const up = await waitCondition('quiet', 'Reachable', 'True', 'HeartbeatReceived');
  assert.equal(
    up.lastSeen,
    iso(T0 + 5 * S),
    "lastSeen is the control plane's time of the heartbeat, not the agent's clock",
  );
  assert.equal(up.reachable, true);
  assert.equal(up.since, iso(T0 + 5 * S));
  assert.equal(up.controlPlaneLastContact, lastAgentClock(), "the agent's fields are kept");

  clock.advance(40 * S - 1);
  await quiet();
  assert.equal(
    (await conditionOf('quiet', 'Reachable'))?.status,
    'True',
    'still reachable 1 ms before the grace period ends',
  );
  clock.advance(1);
  const down = await waitCondition('quiet', 'Reachable', 'False', 'HeartbeatMissed');
  assert.equal(
    down.conditions?.find((c) => c.type === 'Reachable')?.message,
    'no heartbeat for 40s (grace period 40s)',
  );
  assert.equal(down.lastSeen, iso(T0 + 5 * S), 'lastSeen stays at the last heartbeat');
  assert.equal(down.reachable, false);
  assert.equal(down.since, iso(T0 + 45 * S));

  const before = writes('quiet');
  clock.advance(3600 * S);
  await quiet();
  assert.equal(writes('quiet'), before, "an unreachable node's status is not rewritten while nothing happens");

  await heartbeat('quiet');
  const back = await waitCondition('quiet', 'Reachable', 'True', 'HeartbeatReceived');
  assert.equal(back.lastSeen, iso(T0 + 3645 * S));
  assert.equal(back.since, iso(T0 + 3645 * S));
});

test('a node heard between whole seconds is marked unreachable less than a second after its grace period ran out', async (t) => {
  const { clock } = await startController(t);
  await createNode('offbeat');
  clock.advance(5 * S + 300);
  await heartbeat('offbeat');
  await waitCondition('offbeat', 'Reachable', 'True', 'HeartbeatReceived');
  clock.advance(40 * S - 1);
  await quiet();
  assert.equal(
    (await conditionOf('offbeat', 'Reachable'))?.status,
    'True',
    'still reachable 1 ms before the grace period ends',
  );
  clock.advance(T0 + 46 * S - clock.now());
  const down = await waitCondition('offbeat', 'Reachable', 'False', 'HeartbeatMissed');
  assert.equal(down.since, iso(T0 + 46 * S), 'the recheck of a 40 s grace period is rounded up to the whole second');
});

test('heartbeats within the grace period keep a node reachable, and lastTransitionTime moves only on flips', async (t) => {
  const { clock } = await startController(t);
  await createNode('steady');
  await heartbeat('steady');
  const first = await waitCondition('steady', 'Reachable', 'True');
  const flipped = first.conditions!.find((c) => c.type === 'Reachable')!.lastTransitionTime;
  for (let i = 1; i <= 5; i++) {
    clock.advance(30 * S);
    await heartbeat('steady');
    await eventually(async () => assert.equal((await statusOf('steady')).lastSeen, iso(T0 + i * 30 * S)));
  }
  clock.advance(39 * S);
  await quiet();
  const s = await statusOf('steady');
  const c = s.conditions!.find((x) => x.type === 'Reachable')!;
  assert.equal(c.status, 'True', '150 s of heartbeats 30 s apart, 39 s since the last');
  assert.equal(c.lastTransitionTime, flipped);
  assert.equal(s.since, flipped);
});

test("the grace period is the Mesh's spec.reachabilityGracePeriod", async (t) => {
  const { clock } = await startController(t);
  await suite.client.create('meshes', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Mesh',
    metadata: { name: 'mesh' },
    spec: { reachabilityGracePeriod: '2s' },
  });
  // The Mesh cannot be deleted (403): put its settings back to the defaults for the tests after this one.
  t.after(() => suite.client.patch('meshes', 'mesh', { spec: { reachabilityGracePeriod: null } }));
  await createNode('short');
  await heartbeat('short');
  await waitCondition('short', 'Reachable', 'True');
  clock.advance(2 * S);
  const down = await waitCondition('short', 'Reachable', 'False');
  assert.equal(down.conditions?.find((c) => c.type === 'Reachable')?.message, 'no heartbeat for 2s (grace period 2s)');
});

test("a restarted control plane keeps each node's condition for one grace period, then judges it from lastSeen", async (t) => {
  const first = await startController(t);
  await createNode('restart');
  await heartbeat('restart');
  await waitCondition('restart', 'Reachable', 'True');
  await first.stop();

  // The control plane was down for 5 minutes: no heartbeat could arrive meanwhile.
  const { clock } = await startController(t, T0 + 300 * S);
  clock.advance(39 * S);
  await quiet();
  assert.equal(
    (await conditionOf('restart', 'Reachable'))?.status,
    'True',
    'not judged before it had a grace period to hear the node',
  );
  clock.advance(1 * S);
  const down = await waitCondition('restart', 'Reachable', 'False', 'HeartbeatMissed');
  assert.equal(
    down.conditions?.find((c) => c.type === 'Reachable')?.message,
    'no heartbeat for 5m40s (grace period 40s)',
  );
  assert.equal(down.lastSeen, iso(T0));
});

test("a node cannot vouch for itself: a lastSeen it writes is replaced by the control plane's", async (t) => {
  const { clock } = await startController(t);
  await createNode('boastful');
  await heartbeat('boastful');
  await waitCondition('boastful', 'Reachable', 'True');
  await suite.client.patch(
    'nodes',
    'boastful',
    { status: { lastSeen: '2099-01-01T00:00:00Z' } },
    { subresource: 'status' },
  );
  await eventually(async () => assert.equal((await statusOf('boastful')).lastSeen, iso(T0)));
  clock.advance(40 * S);
  const down = await waitCondition('boastful', 'Reachable', 'False');
  assert.equal(down.lastSeen, iso(T0));
});

test('a deleted node is forgotten, not recreated', async (t) => {
  const { clock } = await startController(t);
  await createNode('gone');
  await heartbeat('gone');
  await waitCondition('gone', 'Reachable', 'True');
  await suite.client.delete('nodes', 'gone');
  clock.advance(60 * S);
  await quiet();
  await assert.rejects(suite.client.get('nodes', 'gone'), (e: unknown) => e instanceof ApiError && e.code === 404);
});

test('lastSeen is persisted lazily, like a Lease: most heartbeats cost no write, and what the store holds at a crash is less than one persist interval stale and never in the future', async (t) => {
  // Grace period 40 s (the default): the persist interval is 20 s. Heartbeats every 7 s for 77 s.
  const persistMs = 20 * S;
  const { clock, writes, stop } = await startController(t);
  await createNode('lease');
  await waitCondition('lease', 'Reachable', 'Unknown');
  const before = writes('lease');
  let last = 0;
  for (let i = 0; i < 12; i++) {
    if (i > 0) clock.advance(7 * S);
    last = clock.now();
    await heartbeat('lease');
    await quiet();
    await eventually(async () => {
      const stored = Date.parse((await statusOf('lease')).lastSeen ?? '');
      assert.ok(last - stored < persistMs, `heartbeat ${i}: stored lastSeen ${iso(stored)} vs heard ${iso(last)}`);
      assert.ok(stored <= clock.now(), `heartbeat ${i}: stored lastSeen ${iso(stored)} is not in the future`);
    });
  }
  const sent = writes('lease') - before;
  assert.ok(sent >= 4 && sent <= 5, `12 heartbeats 7 s apart cost ${sent} status writes, one per 20 s and the first`);
  // The controller's memory is lost (as at a SIGKILL); the store has what it persisted.
  await stop();
  const stored = Date.parse((await statusOf('lease')).lastSeen ?? '');
  assert.ok(
    last - stored < persistMs && stored <= last,
    `after the stop: ${iso(stored)} for a last heartbeat at ${iso(last)}`,
  );
  assert.equal((await conditionOf('lease', 'Reachable'))?.status, 'True');
});

test("with the API server's leases, heartbeats that wrote nothing keep a node reachable, and one brings it back at once", async (t) => {
  let beat: (node: string, atMs: number) => void = () => assert.fail('no listener');
  const { clock } = await startController(t, T0, { onBeat: (fn) => (beat = fn) });
  await createNode('leased');
  await waitCondition('leased', 'Reachable', 'Unknown', 'NeverSeen');
  clock.advance(5 * S);
  beat('leased', clock.now());
  const up = await waitCondition('leased', 'Reachable', 'True', 'HeartbeatReceived');
  assert.equal(up.lastSeen, iso(T0 + 5 * S), 'the write that flips the condition carries the lease time');
  const rv = (await suite.client.get('nodes', 'leased')).metadata.resourceVersion;
  for (let i = 0; i < 6; i++) {
    clock.advance(30 * S);
    beat('leased', clock.now());
    await quiet();
  }
  assert.equal((await conditionOf('leased', 'Reachable'))?.status, 'True', '3 minutes of lease beats only');
  assert.equal(
    (await suite.client.get('nodes', 'leased')).metadata.resourceVersion,
    rv,
    'no status write while only the lease is renewed (the lease persists lastSeen)',
  );
  clock.advance(40 * S);
  await waitCondition('leased', 'Reachable', 'False', 'HeartbeatMissed');
  beat('leased', clock.now());
  const back = await waitCondition('leased', 'Reachable', 'True', 'HeartbeatReceived');
  assert.equal(back.lastSeen, iso(clock.now()));
});

test("with the API server's leases, a quiet node's rechecks decide nothing again, but a change of its Node, its Declaration or the Mesh counts at once", async (t) => {
  let beat: (node: string, atMs: number) => void = () => assert.fail('no listener');
  const { clock, writes } = await startController(t, T0, { onBeat: (fn) => (beat = fn) });
  await createNode('calm');
  beat('calm', clock.now());
  await waitCondition('calm', 'Reachable', 'True', 'HeartbeatReceived');
  await quiet();
  const written = writes('calm');
  for (let i = 0; i < 4; i++) {
    clock.advance(30 * S);
    beat('calm', clock.now());
    await quiet();
  }
  assert.equal(writes('calm'), written, 'rechecks between lease beats write nothing');
  const edited = await suite.client.patch('nodes', 'calm', { spec: { site: 'rack-2' } });
  await eventually(async () =>
    assert.equal(
      (await statusOf('calm')).observedGeneration,
      edited.metadata.generation,
      'a new spec is observed at once',
    ),
  );
  await suite.client.create('declarations', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'calm' },
    spec: { generation: 7, resources: [] },
  });
  await eventually(async () =>
    assert.equal((await statusOf('calm')).declaration?.desiredGeneration, 7, 'a new Declaration is decided at once'),
  );
  const mesh = { spec: { reachabilityGracePeriod: '50s' } };
  await suite.client.patch('meshes', 'mesh', mesh).catch(() =>
    suite.client.create('meshes', {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Mesh',
      metadata: { name: 'mesh' },
      ...mesh,
    }),
  );
  t.after(() => suite.client.patch('meshes', 'mesh', { spec: { reachabilityGracePeriod: null } }));
  await eventually(async () =>
    assert.match((await conditionOf('calm', 'Reachable'))?.message ?? '', /\(50s\)/, 'so is a new grace period'),
  );
  clock.advance(50 * S);
  await waitCondition('calm', 'Reachable', 'False', 'HeartbeatMissed');
});

test("in the control plane it yields to the Declaration controller: no Node status is written while that controller's queue is busy", async (t) => {
  const declarations = new WorkQueue();
  declarations.add('some-node'); // a Declaration to write: busy until done
  const { whileBusy, writes } = await startController(t, T0, undefined, declarations);
  await createNode('held');
  await heartbeat('held');
  await quiet(); // room for a write that does not wait (it would be counted while busy)
  const key = await declarations.get();
  declarations.done(key ?? '');
  await waitCondition('held', 'Reachable', 'True', 'HeartbeatReceived');
  assert.ok(writes('held') >= 1);
  assert.equal(whileBusy(), 0, 'no Node status written while Declarations were');
});
