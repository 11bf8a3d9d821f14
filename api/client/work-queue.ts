/**
 * A rate-limited work queue with client-go semantics, keyed by string.
 *
 * - Repeated adds of a key collapse into one while it waits.
 * - A key is handed to one worker at a time; a key added while it is processed is marked dirty
 *   and queued again when the worker calls `done(key)`.
 * - `addAfter` delays through the injectable clock; `addRateLimited` delays by per-key exponential
 *   backoff (`baseDelayMs * 2^n`, capped at `maxDelayMs`) that `forget(key)` resets.
 * - After `shutDown()`, adds are ignored and `get()` drains what is queued, then resolves `undefined`.
 */
import { KeyedBackoff, realClock, type Clock, type TimerHandle } from '../meta/clock.ts';

/** Options of a WorkQueue; the defaults are client-go's (5 ms base, 1000 s cap). */
export interface WorkQueueOptions {
  clock?: Clock;
  /** First retry delay of `addRateLimited`. Default 5 ms. */
  baseDelayMs?: number;
  /** Largest retry delay of `addRateLimited`. Default 1 000 000 ms (1000 s). */
  maxDelayMs?: number;
}

interface Delayed {
  due: number;
  handle: TimerHandle;
}

/** The queue between informers and workers: deduplicates keys, serializes each key, delays and backs off. */
export class WorkQueue {
  private readonly clock: Clock;
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private readonly delayed = new Map<string, Delayed>();
  private readonly backoff: KeyedBackoff;
  private shuttingDown = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.backoff = new KeyedBackoff({ baseMs: opts.baseDelayMs ?? 5, maxMs: opts.maxDelayMs ?? 1_000_000 });
  }

  /** Queues `key` unless it is already waiting; if it is being processed, it is queued again after `done`. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.dispatch();
  }

  /** The next key to process, waiting for one; `undefined` once shut down and drained. Call `done(key)` after. */
  get(): Promise<string | undefined> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` as processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.queue.push(key);
      this.dispatch();
    }
  }

  /** Adds `key` after `ms`; of several pending delays for one key, the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const due = this.clock.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.due <= due) return;
    if (pending) this.clock.clearTimeout(pending.handle);
    const handle = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { due, handle });
  }

  /** Adds `key` after its backoff delay, and counts one more failure for it. */
  addRateLimited(key: string): void {
    this.addAfter(key, this.backoff.next(key));
  }

  /** Resets the backoff of `key` (after it was processed successfully or given up on). */
  forget(key: string): void {
    this.backoff.reset(key);
  }

  /** How many times `key` was re-added with `addRateLimited` since it was last forgotten. */
  numRequeues(key: string): number {
    return this.backoff.failures(key);
  }

  /** The number of keys waiting to be handed out (not counting delayed or in-process keys). */
  len(): number {
    return this.queue.length;
  }

  /** True once `shutDown()` was called. */
  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops accepting keys and drops pending delays; waiting `get()` calls resolve `undefined` once drained. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const d of this.delayed.values()) this.clock.clearTimeout(d.handle);
    this.delayed.clear();
    if (this.queue.length === 0) {
      for (const w of this.waiters.splice(0)) w(undefined);
    }
  }

  private take(): string {
    const key = this.queue.shift() as string;
    this.processing.add(key);
    this.dirty.delete(key);
    return key;
  }

  private dispatch(): void {
    while (this.waiters.length > 0 && this.queue.length > 0) {
      const waiter = this.waiters.shift() as (key: string | undefined) => void;
      waiter(this.take());
    }
  }
}
