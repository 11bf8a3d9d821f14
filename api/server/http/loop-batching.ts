/**
 * Batches the control plane's event-loop turns under a steady stream of small requests, as a network card coalesces
 * interrupts. At 5,000 agents the API answers ~500 heartbeats and log POSTs a second, each arriving on its own: the
 * loop wakes for nearly every one, and an answer then cost the control plane 2–3 times the CPU the same answer costs
 * in a burst (bench/RESULTS.md §9) — each wake-up pays again for the return from epoll, the loop's phases, and the
 * caches the agents' processes used meanwhile. So while the server is handed at least `minPerSecond` requests a
 * second, the main thread holds still (`Atomics.wait`) for `holdMs` once per turn of its loop, unless the loop was
 * busy `busyBelow` or more of the time since the last hold: the kernel queues what arrives meanwhile, and the next
 * turn serves it all.
 *
 * That adds up to `holdMs` (20 ms) to a request's latency while the mesh keeps the server that busy, and nothing to
 * a quieter server (a meshctl command against a small mesh) or to a loop that has no idle time to give up (an
 * all-nodes change, a reconnecting mesh): there it does not hold. A loop that needs more than half its time holds
 * less, down to not at all, so batching never halves what the server can do.
 */
import { performance } from 'node:perf_hooks';
import { realClock, type Clock, type TimerHandle } from '../../meta/clock.ts';

/** How long the loop holds once per turn while batching. */
export const HOLD_MS = 20;
/** The requests a second (over the last second) from which the loop batches. */
export const MIN_REQUESTS_PER_SECOND = 100;
/** The share of time the loop may have been busy since the last hold for it to hold again. */
export const BUSY_BELOW = 0.5;

/** The event loop's time so far, busy and idle (ms): performance.eventLoopUtilization's. */
export interface LoopTime {
  active: number;
  idle: number;
}

/** Options of `startLoopBatching`. */
export interface LoopBatchingOptions {
  /** How many requests the server was handed so far (App.requests). */
  requests: () => number;
  /** Default HOLD_MS. */
  holdMs?: number;
  /** Default MIN_REQUESTS_PER_SECOND. */
  minPerSecond?: number;
  /** Default BUSY_BELOW. */
  busyBelow?: number;
  /** The rate check's and the turns' timers (default: the real clock). */
  clock?: Clock;
  /** Default performance.eventLoopUtilization. */
  loopTime?: () => LoopTime;
  /** Blocks the thread for `ms` and returns how long it did (default: Atomics.wait). */
  hold?: (ms: number) => number;
}

/** What batching did (for tests and benchmarks). */
export interface LoopBatchingStats {
  /** Whether the last second's requests reached the rate. */
  batching: boolean;
  holds: number;
  heldMs: number;
}

/** A running batcher. */
export interface LoopBatching {
  stats(): LoopBatchingStats;
  stop(): void;
}

const word = new Int32Array(new SharedArrayBuffer(4));

/** Holds the thread `ms`: nothing runs, and what arrives waits in the kernel. */
function atomicsHold(ms: number): number {
  const t0 = performance.now();
  Atomics.wait(word, 0, 0, ms);
  return performance.now() - t0;
}

/** Starts batching the loop's turns when the request rate calls for it (see the module comment). */
export function startLoopBatching(opts: LoopBatchingOptions): LoopBatching {
  const holdMs = opts.holdMs ?? HOLD_MS;
  const minPerSecond = opts.minPerSecond ?? MIN_REQUESTS_PER_SECOND;
  const busyBelow = opts.busyBelow ?? BUSY_BELOW;
  const clock = opts.clock ?? realClock;
  const loopTime = opts.loopTime ?? (() => performance.eventLoopUtilization());
  const hold = opts.hold ?? atomicsHold;
  const stats: LoopBatchingStats = { batching: false, holds: 0, heldMs: 0 };
  let counted = opts.requests();
  let countedAt = clock.now();
  let gate: TimerHandle | undefined;
  let turnTimer: TimerHandle | undefined;
  /** The loop's time at the last turn, and how much of the busy time since was the hold. */
  let last = loopTime();
  let held = 0;

  // Re-armed before it holds, the timer is due again by the next turn: the loop then polls once without waiting
  // (serving everything queued during the hold) and comes back here.
  const turn = (): void => {
    turnTimer = clock.setTimeout(turn, 1);
    const now = loopTime();
    const wall = now.active + now.idle - last.active - last.idle;
    const busy = now.active - last.active - held;
    last = now;
    held = 0;
    if (wall > 0 && busy / wall >= busyBelow) return;
    held = hold(holdMs);
    stats.holds++;
    stats.heldMs += held;
  };
  const check = (): void => {
    gate = clock.setTimeout(check, 1000);
    const n = opts.requests();
    const at = clock.now();
    const rate = ((n - counted) * 1000) / Math.max(1, at - countedAt);
    counted = n;
    countedAt = at;
    stats.batching = rate >= minPerSecond;
    if (stats.batching && turnTimer === undefined) {
      last = loopTime();
      held = 0;
      turnTimer = clock.setTimeout(turn, 1);
    } else if (!stats.batching && turnTimer !== undefined) {
      clock.clearTimeout(turnTimer);
      turnTimer = undefined;
    }
  };
  gate = clock.setTimeout(check, 1000);
  return {
    stats: () => ({ ...stats }),
    stop() {
      clock.clearTimeout(gate);
      clock.clearTimeout(turnTimer);
      turnTimer = undefined;
      stats.batching = false;
    },
  };
}
