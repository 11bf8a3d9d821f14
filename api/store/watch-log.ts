/**
 * The bounded in-memory event log watches resume from: a ring of the newest `capacity` durable events, in
 * resourceVersion order. It knows the oldest resourceVersion a watch can resume from: every event after it
 * is still in the log (after open that is the store's resourceVersion; later, the rv of the newest event
 * dropped from the ring).
 */
import type { StoreEvent } from './store-event.ts';

/** Options of the WatchLog constructor. */
export interface WatchLogOptions {
  capacity: number;
  /** The store's resourceVersion when the log starts (nothing before it is known). */
  startRv: number;
}

/** The ring of recent events (see the file comment). */
export class WatchLog {
  readonly capacity: number;
  readonly #ring: (StoreEvent | undefined)[];
  #start = 0;
  #size = 0;
  #resumableFrom: number;

  constructor(opts: WatchLogOptions) {
    if (!Number.isInteger(opts.capacity) || opts.capacity < 1)
      throw new Error(`event log capacity must be a positive integer, got ${opts.capacity}`);
    this.capacity = opts.capacity;
    this.#ring = new Array<StoreEvent | undefined>(opts.capacity);
    this.#resumableFrom = opts.startRv;
  }

  /** Events held. */
  get size(): number {
    return this.#size;
  }

  /** The oldest resourceVersion a watch may resume from: all events after it are in the log. */
  get resumableFrom(): number {
    return this.#resumableFrom;
  }

  /** Appends a durable event (rv order), dropping the oldest when full; returns the dropped one. */
  push(e: StoreEvent): StoreEvent | undefined {
    if (this.#size === this.capacity) {
      const dropped = this.#ring[this.#start] as StoreEvent;
      this.#resumableFrom = dropped.rv;
      this.#ring[this.#start] = e;
      this.#start = (this.#start + 1) % this.capacity;
      return dropped;
    }
    this.#ring[(this.#start + this.#size) % this.capacity] = e;
    this.#size++;
    return undefined;
  }

  #at(i: number): StoreEvent {
    return this.#ring[(this.#start + i) % this.capacity] as StoreEvent;
  }

  /** The index of the first event with rv > `after` (`size` when there is none). */
  #firstAfter(after: number): number {
    let lo = 0;
    let hi = this.#size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#at(mid).rv <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** How many events (of any kind) with rv > `after` the log holds. */
  countAfter(after: number): number {
    return this.#size - this.#firstAfter(after);
  }

  /** The events of one kind with rv in (after, upTo], oldest first. */
  *between(plural: string, after: number, upTo: number): Generator<StoreEvent> {
    for (let i = this.#firstAfter(after); i < this.#size; i++) {
      const e = this.#at(i);
      if (e.rv > upTo) return;
      if (e.plural === plural) yield e;
    }
  }
}
