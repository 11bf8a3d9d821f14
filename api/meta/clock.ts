/**
 * The one injectable clock of all three programs: every delay (requeue, backoff, resync, retry) goes through it,
 * so the runtime loops are unit-tested without sleeping.
 */

/** An opaque timer handle, returned by `setTimeout` and accepted by `clearTimeout`. */
export type TimerHandle = unknown;

/** What the runtime needs from time: the current time in ms and one-shot timers. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The clock of the running process (Date.now and the global timers). */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** A sleep that can be cut short: `promise` resolves after `ms`, or as soon as `cancel()` is called. */
export interface Sleep {
  promise: Promise<void>;
  cancel(): void;
}

/** Sleeps `ms` on `clock`; used for backoff so that stopping does not wait for the timer. */
export function sleep(clock: Clock, ms: number): Sleep {
  let wake: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const handle = clock.setTimeout(() => wake(), ms);
  return {
    promise,
    cancel: () => {
      clock.clearTimeout(handle);
      wake();
    },
  };
}

/** The delay after `failures` failures: `baseMs * 2^failures`, capped at `maxMs`. */
function backoffDelay(baseMs: number, maxMs: number, failures: number): number {
  return failures >= 52 ? maxMs : Math.min(baseMs * 2 ** failures, maxMs);
}

/** Options of `Backoff`. */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /**
   * From 0 (default) to 1: each delay is drawn uniformly from `[d * (1 - jitter), d]`, d the exponential delay, so
   * that many clients that failed together (a restarted server) do not retry together.
   */
  jitter?: number;
  /** The source of randomness in [0, 1) (default Math.random; tests pass their own). */
  random?: () => number;
}

/** `delayMs` shortened by a random part of at most `jitter` of it (see BackoffOptions.jitter). */
export function jittered(delayMs: number, jitter: number, random: () => number = Math.random): number {
  return delayMs * (1 - jitter * random());
}

/** `delayMs` moved by a random part of at most `spread` of it, earlier or later: uniform in `[d(1 - s), d(1 + s)]`, mean d. */
export function spreadAround(delayMs: number, spread: number, random: () => number = Math.random): number {
  return delayMs * (1 - spread + 2 * spread * random());
}

/**
 * Exponential backoff delays: `baseMs * 2^n` after n failures, capped at `maxMs`, optionally jittered
 * (BackoffOptions.jitter); `reset()` after progress.
 */
export class Backoff {
  private count = 0;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly jitter: number;
  private readonly random: () => number;

  constructor(opts: BackoffOptions) {
    this.baseMs = opts.baseMs;
    this.maxMs = opts.maxMs;
    this.jitter = opts.jitter ?? 0;
    this.random = opts.random ?? Math.random;
    if (!(this.jitter >= 0 && this.jitter <= 1)) throw new Error(`jitter must be from 0 to 1, got ${opts.jitter}`);
  }

  /** The delay before the next attempt; counts one more failure. */
  next(): number {
    return jittered(backoffDelay(this.baseMs, this.maxMs, this.count++), this.jitter, this.random);
  }

  /** The longest delay `next()` could return (the un-jittered one), without counting a failure. */
  peek(): number {
    return backoffDelay(this.baseMs, this.maxMs, this.count);
  }

  /** How many failures were counted since the last `reset()`. */
  failures(): number {
    return this.count;
  }

  /** Forgets the failures: the next delay is `baseMs` again. */
  reset(): void {
    this.count = 0;
  }
}

/** A Backoff per key (a work-queue key, a resource id); a key without failures holds no memory. */
export class KeyedBackoff {
  private readonly counts = new Map<string, number>();
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(opts: { baseMs: number; maxMs: number }) {
    this.baseMs = opts.baseMs;
    this.maxMs = opts.maxMs;
  }

  /** The delay before the next attempt of `key`; counts one more failure for it. */
  next(key: string): number {
    const n = this.counts.get(key) ?? 0;
    this.counts.set(key, n + 1);
    return backoffDelay(this.baseMs, this.maxMs, n);
  }

  /** How many failures `key` has had since it was last reset. */
  failures(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** Forgets the failures of `key`. */
  reset(key: string): void {
    this.counts.delete(key);
  }
}
