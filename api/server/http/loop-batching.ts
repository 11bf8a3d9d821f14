/**
 * Batches the control plane's event-loop turns under a steady stream of small requests, as a network card coalesces
 * interrupts. At 5,000 agents the API answers ~500 heartbeats and log POSTs a second, each arriving on its own: the
 * loop wakes for nearly every one, and an answer then cost the control plane 2–3 times the CPU the same answer costs
 * in a burst (bench/RESULTS.md §9) — each wake-up pays again for the return from epoll, the loop's phases, and the
 * caches the agents' processes used meanwhile. So while the server is handed at least `minPerSecond` requests a
 * second, the main thread holds still (`Atomics.wait`) for `holdMs` once per turn of its loop, unless the loop was
 * busy `busyBelow` or more of the time since its last turn (holds not counted), or work in this process waits for its next turns (a
 * journal commit: api/meta/loop-time.ts `awaitingTurns`): the kernel queues what arrives meanwhile, and the next
 * turn serves it all. (Held while a commit waits, a controller that writes node after node waited a hold per write:
 * at 5,000 nodes the overlay controller took 108 s to give every Node its address instead of 1 s.)
 *
 * That adds up to `holdMs` (40 ms; half that on average) to a request's latency while the mesh keeps the server that
 * busy, and nothing to a quieter server (a meshctl command against a small mesh) or to a loop that has no idle time
 * to give up (an all-nodes change, a reconnecting mesh): there it does not hold. A loop that needs more than half its
 * time holds less, down to not at all, so batching never halves what the server can do.
 */
import { realClock, type Clock, type TimerHandle } from '../../meta/clock.ts';
import { busyShare, holdThread, loopTime, workAwaitingTurns, type LoopTime } from '../../meta/loop-time.ts';

/** How long the loop holds once per turn while batching. */
export const HOLD_MS = 40;
/** The requests a second (over the last second) from which the loop batches. */
export const MIN_REQUESTS_PER_SECOND = 100;
/** The share of time the loop may have been busy since the last turn for it to hold again (holds not counted). */
export const BUSY_BELOW = 0.5;

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
  /** Default: api/meta/loop-time.ts `loopTime`. */
  loopTime?: () => LoopTime;
  /** Blocks the thread for `ms` and returns how long it did (default: `holdThread`, which LoopTime.held counts). */
  hold?: (ms: number) => number;
  /** How much work waits for the loop's next turns (default: `workAwaitingTurns`); none is held for while any does. */
  awaiting?: () => number;
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

/** Starts batching the loop's turns when the request rate calls for it (see the module comment). */
export function startLoopBatching(opts: LoopBatchingOptions): LoopBatching {
  const holdMs = opts.holdMs ?? HOLD_MS;
  const minPerSecond = opts.minPerSecond ?? MIN_REQUESTS_PER_SECOND;
  const busyBelow = opts.busyBelow ?? BUSY_BELOW;
  const clock = opts.clock ?? realClock;
  const timeOfLoop = opts.loopTime ?? loopTime;
  const hold = opts.hold ?? holdThread;
  const awaiting = opts.awaiting ?? workAwaitingTurns;
  const stats: LoopBatchingStats = { batching: false, holds: 0, heldMs: 0 };
  let counted = opts.requests();
  let countedAt = clock.now();
  let gate: TimerHandle | undefined;
  let turnTimer: TimerHandle | undefined;
  /** The loop's time at the last turn. */
  let last = timeOfLoop();

  // Re-armed before it holds, the timer is due again by the next turn: the loop then polls once without waiting
  // (serving everything queued during the hold) and comes back here.
  const turn = (): void => {
    turnTimer = clock.setTimeout(turn, 1);
    const now = timeOfLoop();
    // Since the last turn: its hold (not counted busy), the work after it, and any wait for this turn.
    const busy = busyShare(last, now);
    last = now;
    if (busy >= busyBelow || awaiting() > 0) return;
    stats.heldMs += hold(holdMs);
    stats.holds++;
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
      last = timeOfLoop();
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
