/**
 * Summary statistics and number formatting shared by the benchmarks.
 */

/** A latency summary in milliseconds. */
export interface LatencySummary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p99: number;
  max: number;
}

/** Returns the q-quantile (0..1) of an ascending-sorted array, nearest-rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(q * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

/** Summarises samples (any order) into count, min, mean, p50, p99 and max. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    min: sorted.length ? sorted[0] : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

/** Formats a number of milliseconds for a table: 3 significant digits, no exponent. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  if (value >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

/** Formats a rate (per second) for a table. */
export function rate(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(1);
}

/** Formats a target check as **PASS** or **FAIL**. */
export function verdict(ok: boolean): string {
  return ok ? '**PASS**' : '**FAIL**';
}
