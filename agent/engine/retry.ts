/**
 * Per-resource retry backoff for the engine (drivers never retry): after a resource fails, it is not
 * attempted again until its delay has passed — doubling from `initialMs` to `maxMs` with each
 * consecutive failure, reset by a success.
 */
import type { Clock } from './types.ts';

/** Backoff of failed resources between reconciles. */
export interface RetryOptions {
  /** Delay after the first failure. Default 1 s. */
  initialMs?: number;
  /** Cap. Default 5 min. */
  maxMs?: number;
}

/** Tracks failures per resource id. */
export interface RetryTracker {
  /** Why `id` must not be attempted now (it is waiting out its backoff), or undefined. */
  waiting(id: string): string | undefined;
  failed(id: string, message: string): void;
  succeeded(id: string): void;
}

/** Creates a retry tracker on `clock`. */
export function createRetryTracker(opts: RetryOptions & { clock: Clock }): RetryTracker {
  const initial = opts.initialMs ?? 1000;
  const max = opts.maxMs ?? 300_000;
  const state = new Map<string, { failures: number; nextAt: number; message: string }>();
  return {
    waiting(id) {
      const s = state.get(id);
      const left = s ? s.nextAt - opts.clock.now() : 0;
      if (!s || left <= 0) return undefined;
      // An absolute time, not a countdown: the message (reported in the Declaration status) then changes only
      // when something happened, so reconciles while waiting do not rewrite the status.
      return `next attempt at ${new Date(s.nextAt).toISOString()} after ${s.failures} failure(s); last error: ${s.message}`;
    },
    failed(id, message) {
      const failures = (state.get(id)?.failures ?? 0) + 1;
      const delay = Math.min(initial * 2 ** (failures - 1), max);
      state.set(id, { failures, nextAt: opts.clock.now() + delay, message });
    },
    succeeded(id) {
      state.delete(id);
    },
  };
}
