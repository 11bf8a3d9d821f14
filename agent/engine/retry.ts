/**
 * Per-resource retry backoff for the engine (drivers never retry): after a resource fails, it is not
 * attempted again until its delay has passed — doubling from `initialMs` to `maxMs` with each
 * consecutive failure, reset by a success, and forgotten by `reset()` (the agent calls it when a new
 * generation arrives and on `SIGHUP` / `mesh-agent reconcile`: someone changed something, try now).
 *
 * The cap is 30 s. What a resource usually waits for is outside the agent and fixed by a person (a
 * directory created, a port freed, a root mounted): after the fix it should apply within about the
 * time a person waits before looking again, not after minutes (a 5 min cap once took 229 s to
 * recover). A failed attempt costs a few system calls, so retrying every failing resource every 30 s
 * costs nothing measurable, and the delay still grows over the first failures so that a resource that
 * fails at once is not hammered at every reconcile.
 */
import { KeyedBackoff, type Clock } from '../../api/meta/clock.ts';

/** Backoff of failed resources between reconciles. */
export interface RetryOptions {
  /** Delay after the first failure. Default 1 s. */
  initialMs?: number;
  /** Cap. Default 30 s (see the module comment). */
  maxMs?: number;
}

/** The default cap of the per-resource backoff (see the module comment). */
export const RETRY_MAX_MS = 30_000;

/** Tracks failures per resource id. */
export interface RetryTracker {
  /** Why `id` must not be attempted now (it is waiting out its backoff), or undefined. */
  waiting(id: string): string | undefined;
  failed(id: string, message: string): void;
  succeeded(id: string): void;
  /** Forgets every failure: each resource is attempted at the next reconcile, with its delay back at `initialMs`. */
  reset(): void;
}

/** Creates a retry tracker on `clock`. */
export function createRetryTracker(opts: RetryOptions & { clock: Clock }): RetryTracker {
  const backoff = new KeyedBackoff({ baseMs: opts.initialMs ?? 1000, maxMs: opts.maxMs ?? RETRY_MAX_MS });
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
    reset() {
      for (const id of state.keys()) backoff.reset(id);
      state.clear();
    },
  };
}
