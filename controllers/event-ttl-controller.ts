/**
 * Events expire, as kube's event TTL does: an Event is deleted `ttlMs` (default 1 h) after its
 * `metadata.creationTimestamp`, which the server stamps (an event's own `lastTimestamp` is what its reporter
 * claims, so it is not trusted to keep the event alive). A younger event is looked at again when it is due
 * (`requeueAfter`), by the controller's clock. Creation timestamps are whole seconds, so the events created in one
 * second fall due together and share one timer of the work queue. What a node may create is bounded apart from
 * this, by its event quota (api/server/access/event-quota.ts).
 */
import { isReason } from '../api/meta/api-error.ts';
import { realClock, type Clock } from '../api/meta/clock.ts';
import type { Client } from '../api/client/types.ts';
import type { Informer } from '../api/client/informer.ts';
import type { Event } from '../api/v1alpha1/generated/index.ts';
import { createController, type Controller, type Result } from './runtime/controller.ts';
import { informersFor, type ControllerOptions } from './runtime/manager.ts';

/** How long an Event is kept by default. */
export const EVENT_TTL_MS = 60 * 60 * 1000;

/** Options of createEventTtlController. */
export type EventTtlControllerOptions = ControllerOptions & { ttlMs?: number };

/** Creates the event TTL controller; add it to the manager, which starts it once the cache is synced. */
export function createEventTtlController(opts: EventTtlControllerOptions): Controller {
  const { manager } = opts;
  const clock = opts.clock ?? realClock;
  const { events } = informersFor(manager, ['events']);
  const ttlMs = opts.ttlMs ?? EVENT_TTL_MS;
  return createController({
    name: 'event-ttl',
    reconciler: { reconcile: (key) => expire({ client: manager.client, events, clock, ttlMs }, key) },
    workers: opts.workers ?? 1,
    clock,
    logger: manager.logger,
    sources: [{ informer: events }],
  });
}

interface Deps {
  client: Client;
  events: Informer<Event>;
  clock: Clock;
  ttlMs: number;
}

/** Deletes the event when its time is up; otherwise asks to look again then. */
async function expire(d: Deps, name: string): Promise<Result | void> {
  const event = d.events.get(name);
  const created = Date.parse(event?.metadata.creationTimestamp ?? '');
  if (!event || Number.isNaN(created)) return;
  const left = created + d.ttlMs - d.clock.now();
  if (left > 0) return { requeueAfter: left };
  await d.client.delete('events', name).catch((e: unknown) => {
    if (!isReason(e, 'NotFound')) throw e;
  });
}
