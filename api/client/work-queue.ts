/**
 * A rate-limited work queue with client-go semantics, keyed by string.
 *
 * - Repeated adds of a key collapse into one while it waits.
 * - A key is handed to one worker at a time; a key added while it is processed is marked dirty
 *   and queued again when the worker calls `done(key)`.
 * - `addAfter` delays through the injectable clock; `addRateLimited` delays by per-key exponential
 *   backoff (`baseDelayMs * 2^n`, capped at `maxDelayMs`) that `forget(key)` resets.
 * - Keys due at the same time share one timer. With `slotMs`, long delays are rounded up to the end of a slot,
 *   so that a queue holding a recheck per node arms one timer a slot rather than one per node (see slotMs).
 * - `idle()` resolves once no key is queued or being processed (delayed keys do not count), so that other work can
 *   wait for this queue's (controllers/runtime/controller.ts, `yieldTo`).
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
  /**
   * When set, a delay of at least ten slots is rounded up to the next multiple of `slotMs` (by the clock's time),
   * so keys that fall due within one slot share one timer: late by less than one slot, and by less than a tenth of
   * the delay. Shorter delays, such as backoff retries, stay exact. Default: every delay exact.
   *
   * Why: Node keeps a list per distinct timer duration and wakes once per distinct due time. The Node controller
   * rechecks every node when its grace period would run out, at a time that differs per node: at 5,000 nodes that
   * was ~125 wake-ups a second among ~14,000 timers, about 2 points of a core (bench/RESULTS.md §9).
   */
  slotMs?: number;
}

/** The keys due at one time, and the one clock timer that adds them. */
interface Due {
  handle: TimerHandle;
  keys: Set<string>;
}

/** A delay of at least this many slots is rounded up to a slot's end (WorkQueueOptions.slotMs). */
const SLOTS_BEFORE_ROUNDING = 10;

/** The queue between informers and workers: deduplicates keys, serializes each key, delays and backs off. */
export class WorkQueue {
  private readonly clock: Clock;
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  /** Callers of `idle()`, told when the queue is next idle. */
  private idleWaiters: Array<() => void> = [];
  /** When each delayed key is due, and the keys due at each time. */
  private readonly delayed = new Map<string, number>();
  private readonly dues = new Map<number, Due>();
  private readonly slotMs: number | undefined;
  private readonly backoff: KeyedBackoff;
  private shuttingDown = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? realClock;
    if (opts.slotMs !== undefined && !(opts.slotMs > 0)) throw new Error(`slotMs must be positive, got ${opts.slotMs}`);
    this.slotMs = opts.slotMs;
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
    if (!this.busy() && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** True while a key is queued or being processed (a delayed key is neither until it falls due). */
  busy(): boolean {
    return this.queue.length > 0 || this.processing.size > 0;
  }

  /** Resolves once the queue is not `busy()`: at once if it is not, else when the last key in process is done. */
  idle(): Promise<void> {
    if (!this.busy()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Adds `key` after `ms` (rounded up to a slot when long, see slotMs); of several pending delays for one key, the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const now = this.clock.now();
    let due = now + ms;
    if (this.slotMs !== undefined && ms >= SLOTS_BEFORE_ROUNDING * this.slotMs)
      due = Math.ceil(due / this.slotMs) * this.slotMs;
    const pending = this.delayed.get(key);
    if (pending !== undefined && pending <= due) return;
    if (pending !== undefined) this.unschedule(key, pending);
    this.delayed.set(key, due);
    let at = this.dues.get(due);
    if (!at) {
      at = { handle: this.clock.setTimeout(() => this.fire(due), due - now), keys: new Set() };
      this.dues.set(due, at);
    }
    at.keys.add(key);
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
    for (const at of this.dues.values()) this.clock.clearTimeout(at.handle);
    this.dues.clear();
    this.delayed.clear();
    if (this.queue.length === 0) {
      for (const w of this.waiters.splice(0)) w(undefined);
    }
  }

  /** Adds the keys due at `due`. */
  private fire(due: number): void {
    const at = this.dues.get(due);
    if (!at) return;
    this.dues.delete(due);
    for (const key of at.keys) {
      this.delayed.delete(key);
      this.add(key);
    }
  }

  /** Takes `key` out of the keys due at `due`, and disarms that timer if it was the last. */
  private unschedule(key: string, due: number): void {
    const at = this.dues.get(due);
    if (!at) return;
    at.keys.delete(key);
    if (at.keys.size > 0) return;
    this.clock.clearTimeout(at.handle);
    this.dues.delete(due);
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
