/**
 * Drives a closed-loop write load: N concurrent writers, each issuing one operation after another,
 * a warm-up, then a measured window. Reports throughput, latency and the worst event-loop stall.
 */
import { performance } from 'node:perf_hooks';
import { startStallMonitor } from './stall-monitor.ts';
import { summarize, type LatencySummary } from './stats.ts';

/** What one writer does once; resolves when the operation is acknowledged. `worker` is 0..writers-1. */
export type Operation = (worker: number) => Promise<void>;

export interface LoadOptions {
  writers: number;
  warmupMs: number;
  durationMs: number;
  op: Operation;
}

/** The figures of one measured window. */
export interface LoadResult {
  writers: number;
  durationMs: number;
  /** Operations completed inside the measured window. */
  completed: number;
  perSecond: number;
  latency: LatencySummary;
  /** Worst event-loop delay observed during the measured window (ms). */
  maxStallMs: number;
  p99StallMs: number;
  /** Operations that threw (e.g. Conflict); they are retried by the next iteration and not counted. */
  errors: number;
  firstError?: string;
}

/** Runs the load and returns the figures of the measured window (ops that completed inside it). */
export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let measuring = false;
  let stopping = false;
  let errors = 0;
  let firstError: string | undefined;
  const writer = async (i: number): Promise<void> => {
    while (!stopping) {
      const t0 = performance.now();
      try {
        await opts.op(i);
      } catch (e) {
        errors += measuring ? 1 : 0;
        firstError ??= e instanceof Error ? e.message : String(e);
        continue;
      }
      if (measuring) latencies.push(performance.now() - t0);
    }
  };
  const all = Array.from({ length: opts.writers }, (_, i) => writer(i));
  await sleep(opts.warmupMs);
  const monitor = startStallMonitor();
  const start = performance.now();
  measuring = true;
  await sleep(opts.durationMs);
  measuring = false;
  const elapsed = performance.now() - start;
  const stall = monitor.stop();
  stopping = true;
  await Promise.all(all);
  return {
    writers: opts.writers,
    durationMs: elapsed,
    completed: latencies.length,
    perSecond: latencies.length / (elapsed / 1000),
    latency: summarize(latencies),
    maxStallMs: stall.maxMs,
    p99StallMs: stall.p99Ms,
    errors,
    ...(firstError !== undefined ? { firstError } : {}),
  };
}

/** Resolves after `msec` milliseconds. */
export function sleep(msec: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, msec));
}
