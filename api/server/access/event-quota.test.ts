// A node's Events are bounded: a rate per node (429 TooManyRequests with Retry-After beyond it, on a
// FakeClock) and a count (its oldest are deleted past maxStored). The admin is not limited.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../meta/fake-clock.ts';
import { httpRequest, startServer, type TestServer } from '../../../test/harness.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../store/index.ts';
import type { Store } from '../../store/types.ts';
import type { Event } from '../../v1alpha1/generated/event.ts';
import { EVENT_LIMITS, EventQuota, REPORTED_BY_LABEL, type EventLimits } from './event-quota.ts';

const API = '/apis/meshctl.dev/v1alpha1';

async function serve(t: TestContext, clock: FakeClock, eventLimits?: EventLimits): Promise<TestServer> {
  const srv = await startServer({
    insecure: true,
    meshAccess: true,
    clock,
    tokens: { 'tok-a': { kind: 'node', name: 'a' }, 'tok-b': { kind: 'node', name: 'b' } },
    ...(eventLimits ? { eventLimits } : {}),
  });
  t.after(() => srv.stop());
  for (const name of ['a', 'b'])
    await srv.request('POST', `${API}/nodes`, { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name } });
  return srv;
}

const event = (node: string, name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Event',
  metadata: { name, labels },
  involvedObject: { kind: 'Node', name: node },
  type: 'Normal',
  reason: 'Tested',
});
const create = (srv: TestServer, node: string, name: string, labels?: Record<string, string>) =>
  httpRequest({ server: srv.url, token: `tok-${node}` }, 'POST', `${API}/events`, event(node, name, labels));

test('a node creates its burst of events, then gets 429 with Retry-After until its bucket refills', async (t) => {
  const clock = new FakeClock();
  const srv = await serve(t, clock);
  for (let i = 0; i < EVENT_LIMITS.burst; i++) assert.equal((await create(srv, 'a', `a-${i}`)).status, 201);
  const limited = await create(srv, 'a', 'a-over');
  assert.equal(limited.status, 429, limited.text);
  assert.equal(limited.json.reason, 'TooManyRequests');
  assert.match(limited.json.message, /node "a" is creating events faster than it may/);
  const wait = 60 / EVENT_LIMITS.perMinute;
  assert.equal(limited.headers['retry-after'], String(wait));
  assert.equal(srv.store.get('events', 'a-over'), undefined);
  assert.equal((await create(srv, 'b', 'b-0')).status, 201, 'another node has its own bucket');
  assert.equal(
    (await srv.request('POST', `${API}/events`, event('a', 'by-admin'))).status,
    201,
    'the admin is not limited',
  );
  clock.advance(wait * 1000);
  assert.equal((await create(srv, 'a', 'a-over')).status, 201);
});

test("past maxStored a node's oldest events are deleted; the label that counts them is the server's", async (t) => {
  const clock = new FakeClock();
  const srv = await serve(t, clock, { perMinute: 1000, burst: 1000, maxStored: 3 });
  assert.equal((await srv.request('POST', `${API}/events`, event('a', 'by-admin'))).status, 201);
  assert.equal((await create(srv, 'b', 'b-0')).status, 201);
  for (let i = 0; i < 5; i++) {
    const r = await create(srv, 'a', `a-${i}`, { [REPORTED_BY_LABEL]: 'b' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.metadata.labels[REPORTED_BY_LABEL], 'a');
  }
  const names = srv.store
    .list('events')
    .items.map((e) => e.metadata.name)
    .sort();
  assert.deepEqual(names, ['a-2', 'a-3', 'a-4', 'b-0', 'by-admin']);
});

test("a create lists the node's events only when its count could pass maxStored; deletions by others are seen then", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-quota-'));
  const store = await openStore({ dir });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  let lists = 0;
  const list: Store['list'] = (plural, opts) => (lists++, store.list(plural, opts));
  const counted = new Proxy<Store>(store, {
    get: (target, key) => {
      if (key === 'list') return list;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const quota = new EventQuota({ clock: new FakeClock(), limits: { perMinute: 1000, burst: 1000, maxStored: 3 } });
  const add = async (node: string, name: string): Promise<void> => {
    const obj: Event = { ...event(node, name), apiVersion: 'meshctl.dev/v1alpha1', kind: 'Event', type: 'Normal' };
    await store.create('events', quota.label(obj, node));
    await quota.collect(counted, node);
  };
  for (let i = 0; i < 3; i++) await add('a', `a-${i}`);
  await add('b', 'b-0');
  assert.equal(lists, 1, 'one scan of all events, then none while every node is within maxStored');
  await store.delete('events', 'a-0'); // the TTL controller's or the admin's: the quota's count of a is high now
  await add('a', 'a-3');
  assert.equal(lists, 2, 'past the count, the node’s own events are listed');
  const names = (): string[] =>
    store
      .list('events')
      .items.map((e) => e.metadata.name!)
      .sort();
  assert.deepEqual(names(), ['a-1', 'a-2', 'a-3', 'b-0'], 'a has 3: none deleted');
  await add('a', 'a-4');
  assert.deepEqual(names(), ['a-2', 'a-3', 'a-4', 'b-0'], "past maxStored a's oldest is deleted");
});
