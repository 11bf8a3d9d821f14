/**
 * Measures event-loop stalls while a benchmark runs: how late a 1 ms timer fired, at worst.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** A running event-loop delay monitor; `stop()` returns what it saw, in milliseconds. */
export interface StallMonitor {
  stop(): { maxMs: number; p99Ms: number };
}

/** Starts sampling the event-loop delay with a 1 ms timer (perf_hooks.monitorEventLoopDelay). */
export function startStallMonitor(): StallMonitor {
  const h: IntervalHistogram = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  return {
    stop() {
      h.disable();
      return { maxMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6 };
    },
  };
}
