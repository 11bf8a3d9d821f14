/**
 * Per-resource retry backoff for the engine (drivers never retry): after a resource fails, it is not
 * attempted again until its delay has passed — doubling from `initialMs` to `maxMs` with each
 * consecutive failure, reset by a success.
 */
import { KeyedBackoff, type Clock } from '../../api/meta/clock.ts';

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
  const backoff = new KeyedBackoff({ baseMs: opts.initialMs ?? 1000, maxMs: opts.maxMs ?? 300_000 });
  const state = new Map<string, { nextAt: number; message: string }>();
  return {
    waiting(id) {
      const s = state.get(id);
      const left = s ? s.nextAt - opts.clock.now() : 0;
      if (!s || left <= 0) return undefined;
      // An absolute time, not a countdown: the message (reported in the Declaration status) then changes only
      // when something happened, so reconciles while waiting do not rewrite the status.
      return `next attempt at ${new Date(s.nextAt).toISOString()} after ${backoff.failures(id)} failure(s); last error: ${s.message}`;
    },
    failed(id, message) {
      state.set(id, { nextAt: opts.clock.now() + backoff.next(id), message });
    },
    succeeded(id) {
      state.delete(id);
      backoff.reset(id);
    },
  };
}
