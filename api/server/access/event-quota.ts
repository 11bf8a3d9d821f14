/**
 * What a node may create of Events, as kube bounds events with its event rate limit and event TTL: a rate
 * (a token bucket per node; beyond it 429 TooManyRequests with `Retry-After`) and a count (at most
 * `maxStored` of a node's events are kept: creating one more deletes its oldest). An Event a node creates
 * carries the label `meshctl.dev/reported-by-node: <node>` (set by the server, whatever the body said), so
 * its events are found and counted without trusting what they claim to be about.
 *
 * The count is kept by the node's store view (node-restriction.ts) right after each create, not by a
 * controller: that view is the only way a node creates events, so a node never holds more than
 * `maxStored` for longer than one request, and no loop has to scan the store on a timer. Nor does a create: the
 * quota counts each node's events itself (one scan of all events when first needed, then one more per create;
 * deletions by others only make a count high) and lists a node's events only when its count passes `maxStored`.
 * Listing them on every create made the herd of N agents reporting `ControlPlaneUnreachable` at once O(N²): 19 %
 * of the busy time of a control plane restarted under 2,000 agents.
 */
import { ApiError, isReason } from '../../meta/api-error.ts';
import type { Clock } from '../../meta/clock.ts';
import { RateLimiter } from '../../meta/rate-limiter.ts';
import type { KubeObject } from '../../meta/types.ts';
import type { Store } from '../../store/types.ts';

/** The label naming the node that created an Event. */
export const REPORTED_BY_LABEL = 'meshctl.dev/reported-by-node';

/** How many Events a node may create: per minute, at once (burst), and keep (its oldest are deleted). */
export interface EventLimits {
  perMinute: number;
  burst: number;
  maxStored: number;
}

/** The limits of the control plane. */
export const EVENT_LIMITS: EventLimits = { perMinute: 60, burst: 60, maxStored: 500 };

/** The event quota of every node (see the module comment). */
export class EventQuota {
  readonly #rate: RateLimiter;
  readonly #maxStored: number;
  /** Per node, at least how many events it has stored (undefined until the first collect). */
  #stored?: Map<string, number>;

  constructor(opts: { clock: Clock; limits?: EventLimits }) {
    const limits = opts.limits ?? EVENT_LIMITS;
    this.#rate = new RateLimiter({ perMinute: limits.perMinute, burst: limits.burst, clock: opts.clock });
    this.#maxStored = limits.maxStored;
  }

  /** Takes one event of `node`'s rate; throws 429 when it has none left. */
  take(node: string): void {
    const wait = this.#rate.take(node);
    if (wait === undefined) return;
    throw ApiError.tooManyRequests(
      `node "${node}" is creating events faster than it may; try again later`,
      wait,
      'event_quota',
    );
  }

  /** The event as stored: labelled with the node that created it. */
  label<T extends KubeObject>(event: T, node: string): T {
    const metadata = event.metadata ?? {};
    return { ...event, metadata: { ...metadata, labels: { ...metadata.labels, [REPORTED_BY_LABEL]: node } } };
  }

  /** Deletes `node`'s oldest events beyond `maxStored` (oldest by resourceVersion; nodes never update events). */
  async collect(store: Store, node: string): Promise<void> {
    const counts = this.#counts(store, node);
    if ((counts.get(node) ?? 0) <= this.#maxStored) return;
    const own = store.list('events', { labelSelector: `${REPORTED_BY_LABEL}=${node}` }).items;
    counts.set(node, Math.min(own.length, this.#maxStored));
    if (own.length <= this.#maxStored) return;
    const rv = (e: KubeObject): number => Number(e.metadata.resourceVersion ?? 0);
    const oldest = own.sort((a, b) => rv(a) - rv(b)).slice(0, own.length - this.#maxStored);
    for (const e of oldest) {
      await store.delete('events', e.metadata.name!).catch((err: unknown) => {
        if (!isReason(err, 'NotFound')) throw err;
      });
    }
  }

  /** The counts with the event `node` just created in them: the first time, by one scan of all events. */
  #counts(store: Store, node: string): Map<string, number> {
    if (this.#stored) {
      this.#stored.set(node, (this.#stored.get(node) ?? 0) + 1);
      return this.#stored;
    }
    const counts = new Map<string, number>();
    for (const e of store.list('events').items) {
      const by = e.metadata.labels?.[REPORTED_BY_LABEL];
      if (by) counts.set(by, (counts.get(by) ?? 0) + 1);
    }
    return (this.#stored = counts);
  }
}
