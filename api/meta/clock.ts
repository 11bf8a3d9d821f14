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
  const promise = new Promise<void>((resolve) => { wake = resolve; });
  const handle = clock.setTimeout(() => wake(), ms);
  return { promise, cancel: () => { clock.clearTimeout(handle); wake(); } };
}

/** Exponential backoff delays: `baseMs * 2^n` after n failures, capped at `maxMs`; `reset()` after progress. */
export class Backoff {
  private failures = 0;
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(opts: { baseMs: number; maxMs: number }) {
    this.baseMs = opts.baseMs;
    this.maxMs = opts.maxMs;
  }

  /** The delay before the next attempt; counts one more failure. */
  next(): number {
    const n = this.failures++;
    return n >= 52 ? this.maxMs : Math.min(this.baseMs * 2 ** n, this.maxMs);
  }

  reset(): void {
    this.failures = 0;
  }
}
