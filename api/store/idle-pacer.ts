/**
 * Background work that gives way to the foreground: a store compaction writes its snapshot in chunks
 * (snapshot.ts), and between chunks it calls a pacer made here. After each slice of work (`workMs`) the pacer
 * looks at how busy the event loop was over a short step (`stepMs`, spent waiting) and waits more steps while it
 * was busier than `busyAbove` — so a snapshot that falls in a burst of writes (an all-nodes change: 20,000 writes in
 * a few seconds at N = 5,000) does most of its encoding after it, instead of taking a share of the event loop from
 * it. The waiting is bounded: after `maxWaitMs` in all the pacer no longer waits, so a loop that stays busy still
 * gets its journal compacted, only later. An idle loop costs the compaction one step per slice.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { busyShare, loopTime } from '../meta/loop-time.ts';

/** Options of `idlePacer`. */
export interface IdlePacerOptions {
  /** How long the work runs before the pacer looks again. Default 20 ms. */
  workMs?: number;
  /** How long one look at the event loop lasts (waiting). Default 20 ms. */
  stepMs?: number;
  /** The event-loop utilization (0–1) above which the work waits. Default 0.5. */
  busyAbove?: number;
  /** The most the pacer waits in all; then it only yields. Default 30 s. */
  maxWaitMs?: number;
  /**
   * Waits `ms` and resolves with the share of it the event loop was busy (default: api/meta/loop-time.ts `busyShare`,
   * which does not count the time the loop was held by api/server/http/loop-batching.ts as busy).
   */
  utilization?: (ms: number) => Promise<number>;
  /** Milliseconds, monotonic (default performance.now). */
  now?: () => number;
}

/** How the pacer spent its time (the compaction logs it). */
export interface PacerStats {
  /** Milliseconds spent waiting for a quieter loop, beyond the looks that found it quiet. */
  waitedMs: number;
}

/** What a compaction awaits between chunks. */
export interface Pacer {
  (): Promise<void>;
  stats(): PacerStats;
}

/** Waits `ms`; resolves with the share of it the event loop was busy. */
async function loopUtilization(ms: number): Promise<number> {
  const before = loopTime();
  await sleep(ms);
  return busyShare(before, loopTime());
}

/** A pacer for background work (see the module comment). */
export function idlePacer(opts: IdlePacerOptions = {}): Pacer {
  const workMs = opts.workMs ?? 20;
  const stepMs = opts.stepMs ?? 20;
  const busyAbove = opts.busyAbove ?? 0.5;
  const maxWaitMs = opts.maxWaitMs ?? 30_000;
  const utilization = opts.utilization ?? loopUtilization;
  const now = opts.now ?? (() => performance.now());
  let sliceStart = now();
  let waited = 0;
  let waitedBusy = 0;
  const pace = async (): Promise<void> => {
    if (waited >= maxWaitMs || now() - sliceStart < workMs) return yieldToLoop();
    for (;;) {
      const t0 = now();
      const busy = (await utilization(stepMs)) > busyAbove;
      waited += now() - t0;
      if (!busy || waited >= maxWaitMs) break;
      waitedBusy += now() - t0;
    }
    sliceStart = now();
  };
  return Object.assign(pace, { stats: (): PacerStats => ({ waitedMs: Math.round(waitedBusy) }) });
}
