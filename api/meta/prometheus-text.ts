/**
 * The Prometheus text exposition format (0.0.4), written by hand: what the agent's and the control plane's
 * `/metrics` endpoints send (agent/metrics.ts, api/server/http/metrics.ts).
 */

/** The Content-Type of a `/metrics` answer. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A label value escaped for the exposition format (backslash, newline, double quote). */
export function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function num(v: number): string {
  return Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN';
}

/** One metric family; each sample is `[suffix and labels, value]` (e.g. `['_bucket{le="1"}', 3]`). */
export function metricFamily(
  name: string,
  type: 'counter' | 'gauge' | 'histogram',
  help: string,
  samples: Array<[labels: string, value: number]>,
): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const [labels, value] of samples) lines.push(`${name}${labels} ${num(value)}`);
  return lines.join('\n') + '\n';
}
