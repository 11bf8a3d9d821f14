// A node's heartbeat (a status write changing only controlPlaneLastContact) is a lease in memory: it costs no
// store write and no watch event until it is due for persisting (then with lastSeen, the server's time); any
// other change of the status is written at once; the admin's writes are never absorbed. On a FakeClock.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../meta/fake-clock.ts';
import { rfc3339 } from '../../meta/timestamp.ts';
import { httpRequest, startServer, type TestServer } from '../../../test/harness.ts';
import type { Node } from '../../v1alpha1/generated/node.ts';
import { eventually } from '../../../test/eventually.ts';
import { LEASE_PERSIST_MS, NodeLeases, PERSIST_BATCH_MS } from './node-leases.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const MERGE = { 'content-type': 'application/merge-patch+json' };

async function serve(t: TestContext, clock: FakeClock): Promise<TestServer> {
  const srv = await startServer({
    insecure: true,
    meshAccess: true,
    clock,
    tokens: { 'tok-a': { kind: 'node', name: 'a' } },
  });
  t.after(() => srv.stop());
  const r = await srv.request('POST', `${API}/nodes`, {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'a' },
  });
  assert.equal(r.status, 201, r.text);
  return srv;
}

/** The node's own heartbeat, as agent/sync/reporter.ts sends it. */
const beat = (srv: TestServer, at: number, agentVersion = 'v1') =>
  httpRequest(
    { server: srv.url, token: 'tok-a' },
    'PATCH',
    `${API}/nodes/a/status`,
    {
      status: { controlPlaneLastContact: rfc3339(at), agentVersion, declaration: {} },
    },
    MERGE,
  );

test('a heartbeat that changes nothing else is answered from the lease until it is due for persisting', async (t) => {
  const clock = new FakeClock({ start: Date.parse('2026-01-01T00:00:00Z') });
  const srv = await serve(t, clock);
  const first = await beat(srv, clock.now());
  assert.equal(first.status, 200, first.text);
  const rv1 = srv.store.get('nodes', 'a')!.metadata.resourceVersion;
  assert.equal(srv.store.get('nodes', 'a')!.status?.lastSeen, rfc3339(clock.now()), 'the first heartbeat is persisted');
  assert.equal(srv.store.get('nodes', 'a')!.status?.controlPlaneLastContact, rfc3339(clock.now()));

  clock.advance(10_000);
  const second = await beat(srv, clock.now());
  assert.equal(second.status, 200, second.text);
  assert.equal(second.json.status.controlPlaneLastContact, rfc3339(clock.now()), 'the answer carries the new contact');
  assert.equal(second.json.metadata.resourceVersion, rv1);
  assert.equal(srv.store.get('nodes', 'a')!.metadata.resourceVersion, rv1, 'no store write for a plain heartbeat');
  assert.equal(srv.store.resourceVersion(), rv1, 'nothing else was written either');

  clock.advance(1000);
  const changed = await beat(srv, clock.now(), 'v2');
  assert.notEqual(changed.json.metadata.resourceVersion, rv1, 'another change in the status is written at once');
  assert.equal(srv.store.get('nodes', 'a')!.status?.agentVersion, 'v2');
  assert.equal(srv.store.get('nodes', 'a')!.status?.lastSeen, rfc3339(clock.now()), 'and persists the heartbeat');

  clock.advance(LEASE_PERSIST_MS);
  const heardAt = clock.now();
  const timers = clock.pending();
  const answer = beat(srv, heardAt, 'v2');
  await eventually(async () => assert.ok(clock.pending() > timers, 'the persist waits for its batch'));
  assert.notEqual(srv.store.get('nodes', 'a')!.status?.controlPlaneLastContact, rfc3339(heardAt), 'not yet written');
  clock.advance(PERSIST_BATCH_MS);
  const due = await answer;
  assert.equal(due.status, 200, due.text);
  const stored = srv.store.get('nodes', 'a')!.status!;
  assert.equal(stored.controlPlaneLastContact, rfc3339(heardAt), 'persisted once a persist interval passed');
  assert.equal(stored.lastSeen, rfc3339(heardAt), 'with lastSeen, the time the server heard it (not its batch)');
});

test('heartbeats due for persisting meanwhile are written together when their batch is due, and heard at once', async (t) => {
  const clock = new FakeClock({ start: Date.parse('2026-01-01T00:00:00Z') });
  const srv = await serve(t, clock);
  const leases = new NodeLeases({ clock, persistMs: 10_000, maxPersistPerSecond: 1000, random: () => 0 });
  const heard: string[] = [];
  leases.onBeat((node, at) => heard.push(`${node}@${at}`));
  const names = ['b0', 'b1', 'b2'];
  const log: string[] = [];
  const write = (o: Node) => {
    log.push(`write ${o.metadata.name}`);
    return srv.store.update('nodes', o, { subresource: 'status' }).finally(() => log.push(`done ${o.metadata.name}`));
  };
  const beatOf = (name: string) => {
    const stored = srv.store.get('nodes', name)!;
    const obj: Node = { ...stored, status: { ...stored.status, controlPlaneLastContact: rfc3339(clock.now()) } };
    return leases.update(srv.store, obj, write);
  };
  for (const name of names) {
    await srv.store.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name } });
    await beatOf(name);
  }
  assert.deepEqual(log, ['write b0', 'done b0', 'write b1', 'done b1', 'write b2', 'done b2'], 'first ones: at once');
  log.length = 0;
  heard.length = 0;
  clock.advance(10_000);
  const first = clock.now();
  const answers = [beatOf('b0')];
  clock.advance(300);
  answers.push(beatOf('b1'), beatOf('b2'));
  await eventually(async () => assert.equal(heard.length, 3, 'each heard when it arrived'));
  assert.deepEqual(heard, [`b0@${first}`, `b1@${first + 300}`, `b2@${first + 300}`]);
  assert.deepEqual(log, [], 'none written before the batch is due');
  clock.advance(PERSIST_BATCH_MS - 300);
  await Promise.all(answers);
  assert.deepEqual(log.slice(0, 3), ['write b0', 'write b1', 'write b2'], 'all issued before the first is durable');
  assert.equal(srv.store.get('nodes', 'b0')!.status?.lastSeen, rfc3339(first), 'lastSeen: when it was heard');
  assert.equal(srv.store.get('nodes', 'b2')!.status?.lastSeen, rfc3339(first + 300));
  assert.equal(heard.length, 3, 'not heard again when written');
});

test("the admin's status writes and a node's invalid contact time are never absorbed", async (t) => {
  const clock = new FakeClock({ start: Date.parse('2026-01-01T00:00:00Z') });
  const srv = await serve(t, clock);
  await beat(srv, clock.now());
  const rv = srv.store.get('nodes', 'a')!.metadata.resourceVersion;
  const admin = await srv.request(
    'PATCH',
    `${API}/nodes/a/status`,
    { status: { controlPlaneLastContact: rfc3339(clock.now() + 5000) } },
    MERGE,
  );
  assert.equal(admin.status, 200, admin.text);
  assert.notEqual(srv.store.get('nodes', 'a')!.metadata.resourceVersion, rv, "the admin's write is stored");
  const bad = await httpRequest(
    { server: srv.url, token: 'tok-a' },
    'PATCH',
    `${API}/nodes/a/status`,
    {
      status: { controlPlaneLastContact: 'yesterday' },
    },
    MERGE,
  );
  assert.equal(bad.status, 422, `an invalid time goes to admission and is refused: ${bad.text}`);
});

test('a heartbeat that removes or adds a status field is written at once', async (t) => {
  const clock = new FakeClock({ start: Date.parse('2026-01-01T00:00:00Z') });
  const srv = await serve(t, clock);
  await beat(srv, clock.now());
  const rv = srv.store.get('nodes', 'a')!.metadata.resourceVersion;
  clock.advance(10_000);
  const removed = await httpRequest(
    { server: srv.url, token: 'tok-a' },
    'PATCH',
    `${API}/nodes/a/status`,
    { status: { controlPlaneLastContact: rfc3339(clock.now()), agentVersion: null } },
    MERGE,
  );
  assert.equal(removed.status, 200, removed.text);
  const rv2 = srv.store.get('nodes', 'a')!.metadata.resourceVersion;
  assert.notEqual(rv2, rv, 'a removed field is a change');
  assert.equal(srv.store.get('nodes', 'a')!.status?.agentVersion, undefined);
  clock.advance(10_000);
  const added = await beat(srv, clock.now());
  assert.equal(added.status, 200, added.text);
  assert.notEqual(srv.store.get('nodes', 'a')!.metadata.resourceVersion, rv2, 'an added field is a change');
  assert.equal(srv.store.get('nodes', 'a')!.status?.agentVersion, 'v1');
});

test("a heartbeat's appliedGeneration is absorbed once its Declaration status reports it, and written while it does not", async (t) => {
  const clock = new FakeClock({ start: Date.parse('2026-01-01T00:00:00Z') });
  const srv = await serve(t, clock);
  const created = await srv.request('POST', `${API}/declarations`, {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'a' },
    spec: { generation: 3, resources: [] },
  });
  assert.equal(created.status, 201, created.text);
  const report = (applied: number) =>
    srv.request('PATCH', `${API}/declarations/a/status`, { status: { appliedGeneration: applied } }, MERGE);
  const applied = (at: number, generation: number) =>
    httpRequest(
      { server: srv.url, token: 'tok-a' },
      'PATCH',
      `${API}/nodes/a/status`,
      {
        status: {
          controlPlaneLastContact: rfc3339(at),
          agentVersion: 'v1',
          declaration: { appliedGeneration: generation },
        },
      },
      MERGE,
    );
  assert.equal((await report(2)).status, 200);
  assert.equal((await applied(clock.now(), 2)).status, 200);
  const rv = srv.store.get('nodes', 'a')!.metadata.resourceVersion;

  clock.advance(1000);
  assert.equal((await applied(clock.now(), 3)).status, 200);
  const unreported = srv.store.get('nodes', 'a')!;
  assert.notEqual(unreported.metadata.resourceVersion, rv, 'a generation the Declaration does not report is written');
  assert.equal(unreported.status?.declaration?.appliedGeneration, 3);

  assert.equal(
    (await srv.request('PATCH', `${API}/nodes/a/status`, { status: { declaration: { appliedGeneration: 2 } } }, MERGE))
      .status,
    200,
  );
  assert.equal((await report(3)).status, 200);
  const rv2 = srv.store.resourceVersion();
  clock.advance(1000);
  const absorbed = await applied(clock.now(), 3);
  assert.equal(absorbed.status, 200, absorbed.text);
  assert.equal(srv.store.resourceVersion(), rv2, 'reported by the Declaration: absorbed, no store write');
  assert.equal(
    srv.store.get('nodes', 'a')!.status?.declaration?.appliedGeneration,
    2,
    "the Node controller's to raise",
  );

  clock.advance(1000);
  await applied(clock.now(), 4);
  assert.equal(
    srv.store.get('nodes', 'a')!.status?.declaration?.appliedGeneration,
    4,
    'beyond the reported one: written',
  );
  await srv.request('PATCH', `${API}/nodes/a/status`, { status: { declaration: { appliedGeneration: 5 } } }, MERGE);
  clock.advance(1000);
  await applied(clock.now(), 3);
  assert.equal(
    srv.store.get('nodes', 'a')!.status?.declaration?.appliedGeneration,
    3,
    'lowering the stored one is written',
  );
});

test('listeners hear every heartbeat; the persist interval grows so that at most the maximum rate is persisted', async (t) => {
  const clock = new FakeClock({ start: Date.parse('2026-01-01T00:00:00Z') });
  const srv = await serve(t, clock);
  const leases = new NodeLeases({ clock, persistMs: 1000, maxPersistPerSecond: 2, random: () => 0 });
  const heard: string[] = [];
  leases.onBeat((node, at) => heard.push(`${node}@${at - clock.now()}`));
  assert.equal(leases.interval(), 1000);
  const names = Array.from({ length: 10 }, (_, i) => `n${i}`);
  for (const name of names) {
    const node = await srv.store.create('nodes', {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Node',
      metadata: { name },
    });
    const obj: Node = { ...node, status: { controlPlaneLastContact: rfc3339(clock.now()) } };
    await leases.update(srv.store, obj, (o) => srv.store.update('nodes', o, { subresource: 'status' }));
  }
  assert.equal(heard.length, 10, 'every heartbeat was heard');
  assert.ok(
    heard.every((h) => h.endsWith('@0')),
    `heard at the server's time: ${heard.join(' ')}`,
  );
  assert.equal(leases.interval(), 5000, '10 nodes at 2 persisted a second: every 5 s');
  const rv = srv.store.resourceVersion();
  clock.advance(4000);
  const n0 = srv.store.get('nodes', 'n0')!;
  const beat: Node = { ...n0, status: { ...n0.status, controlPlaneLastContact: rfc3339(clock.now()) } };
  await leases.update(srv.store, beat, (o) => srv.store.update('nodes', o, { subresource: 'status' }));
  assert.equal(srv.store.resourceVersion(), rv, 'within the grown interval: not persisted');
  assert.equal(heard.length, 11);
});

test("a node's first persist counts as made up to half an interval earlier, so nodes heard together come due spread", async (t) => {
  const clock = new FakeClock({ start: Date.parse('2026-01-01T00:00:00Z') });
  const srv = await serve(t, clock);
  const draws = [0, 0.5, 0.9];
  const leases = new NodeLeases({
    clock,
    persistMs: 10_000,
    maxPersistPerSecond: 1000,
    random: () => draws.shift() ?? 0,
    batchMs: 0,
  });
  const names = ['p0', 'p1', 'p2'];
  const write = (o: Node) => srv.store.update('nodes', o, { subresource: 'status' });
  const beatOf = async (name: string): Promise<boolean> => {
    const stored = srv.store.get('nodes', name)!;
    const obj: Node = { ...stored, status: { ...stored.status, controlPlaneLastContact: rfc3339(clock.now()) } };
    const rv = srv.store.resourceVersion();
    await leases.update(srv.store, obj, write);
    return srv.store.resourceVersion() !== rv;
  };
  for (const name of names) {
    await srv.store.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name } });
    assert.equal(await beatOf(name), true, `${name}: the first heartbeat is persisted`);
  }
  const due = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const name of names) if (await beatOf(name)) out.push(name);
    return out;
  };
  clock.advance(6_000);
  assert.deepEqual(await due(), ['p2'], 'dated back by 4.5 s: due after 5.5 s');
  clock.advance(2_000);
  assert.deepEqual(await due(), ['p1'], 'dated back by 2.5 s: due after 7.5 s');
  clock.advance(2_000);
  assert.deepEqual(await due(), ['p0'], 'not dated back: due after the whole interval, never later');
  clock.advance(6_000);
  assert.deepEqual(await due(), ['p2'], 'later persists keep the spread, one interval apart');
});

test("every other request of a node renews its lease: the listeners hear its log POST as a heartbeat, not the admin's requests", async (t) => {
  const clock = new FakeClock({ start: Date.parse('2026-01-01T00:00:00Z') });
  const srv = await serve(t, clock);
  const heard: string[] = [];
  srv.leases!.onBeat((node, at) => heard.push(`${node}@${at}`));
  const node = { server: srv.url, token: 'tok-a' };
  const post = await httpRequest(node, 'POST', `${API}/nodes/a/logs`, {
    stream: 's1',
    entries: [{ seq: 1, service: 'app', time: rfc3339(clock.now()), line: 'hello' }],
  });
  assert.equal(post.status, 200, post.text);
  assert.deepEqual(heard, [`a@${clock.now()}`], 'the log POST renewed the lease at the time it arrived');
  const rv = srv.store.resourceVersion();
  clock.advance(5000);
  const refused = await httpRequest(node, 'GET', `${API}/nodes`);
  assert.equal(refused.status, 403, 'a request the node may not make still shows it alive');
  assert.deepEqual(heard, [`a@${clock.now() - 5000}`, `a@${clock.now()}`]);
  assert.equal(srv.store.resourceVersion(), rv, 'neither was written to the store');
  await srv.request('GET', `${API}/nodes/a`);
  await httpRequest({ server: srv.url, token: 'not-a-token' }, 'GET', `${API}/nodes/a`);
  assert.equal(heard.length, 2, "the admin's request and an unauthenticated one renew nothing");
});
