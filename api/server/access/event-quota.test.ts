// A node's Events are bounded: a rate per node (429 TooManyRequests with Retry-After beyond it, on a
// FakeClock) and a count (its oldest are deleted past maxStored). The admin is not limited.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../meta/fake-clock.ts';
import { httpRequest, startServer, type TestServer } from '../../../test/harness.ts';
import { EVENT_LIMITS, REPORTED_BY_LABEL, type EventLimits } from './event-quota.ts';

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
