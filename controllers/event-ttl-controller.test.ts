/**
 * The event TTL controller against the real API server and store (in-process, port 0), run by the
 * controller manager on a FakeClock: an Event is deleted once its TTL after creation has passed, not before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Event } from '../api/v1alpha1/generated/index.ts';
import { FakeClock } from '../api/meta/fake-clock.ts';
import { silentLogger } from '../api/meta/logger.ts';
import { serverSuite } from '../test/server-suite.ts';
import { eventually } from '../test/eventually.ts';
import { createEventTtlController, EVENT_TTL_MS } from './event-ttl-controller.ts';
import { createManager } from './runtime/manager.ts';

const suite = serverSuite();

const event = (name: string): Event => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Event',
  metadata: { name },
  involvedObject: { kind: 'Node', name: 'a' },
  type: 'Normal',
  reason: 'Tested',
  lastTimestamp: '2099-01-01T00:00:00Z',
});

test('an Event is deleted one hour after it was created, by the controller clock', async (t) => {
  const old = await suite.client.create('events', event('old'));
  const created = Date.parse(old.metadata.creationTimestamp!);
  const clock = new FakeClock({ start: created });
  const manager = createManager({ client: suite.client, logger: silentLogger, clock });
  manager.add(createEventTtlController({ manager, clock }));
  assert.equal(await manager.start(), true);
  t.after(() => manager.stop());
  // Queued with requeueAfter once reconciled: the queue then holds a timer on the fake clock.
  await eventually(async () => assert.ok(clock.pending() > 0));
  clock.advance(EVENT_TTL_MS - 1);
  assert.ok(suite.server.store.get('events', 'old'), 'kept until its time is up');
  // creationTimestamp has second precision: create the young event in a later second than the old one.
  await eventually(async () => assert.ok(Date.now() >= created + 1000, 'a second has passed since the old event'), {
    timeoutMs: 3000,
  });
  await suite.client.create('events', event('young'));
  clock.advance(1);
  await eventually(async () => assert.equal(suite.server.store.get('events', 'old'), undefined));
  assert.ok(suite.server.store.get('events', 'young'), 'an event created later is kept');
});
