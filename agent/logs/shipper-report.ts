/**
 * What the log shipper tells people: the message of its `LogsDropped` Event and its Prometheus metrics.
 *
 *   meshagent_log_dropped_lines_total   counter  lines dropped because the buffer was full (kept across restarts)
 *   meshagent_log_dropped_bytes_total   counter  their bytes (text and newline)
 *   meshagent_log_buffer_bytes          gauge    bytes of lines buffered, not yet delivered
 *   meshagent_log_shipped_lines_total   counter  lines delivered by this agent process
 */
import type { DropCount } from './log-entry.ts';
import type { ServiceDrops } from './log-buffer.ts';

/** Bytes in a short human form (`2 KiB`, `16 MiB`). */
export function formatBytes(n: number): string {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (n >= size) return `${Number((n / size).toFixed(1))} ${unit}`;
  }
  return `${n} bytes`;
}

/** The message of a `LogsDropped` Event. */
export function dropsMessage(drops: ServiceDrops, limitBytes: number): string {
  const lines = drops.reduce((s, d) => s + d.lines, 0);
  const bytes = drops.reduce((s, d) => s + d.bytes, 0);
  const each = drops.map((d) => `${d.service}: ${d.lines} lines (${d.bytes} bytes)`).join(', ');
  const text =
    `dropped ${lines} log lines (${bytes} bytes), the oldest first, because the node's log buffer (${formatBytes(limitBytes)}) ` +
    `was full while the control plane could not be reached; ${each}`;
  return text.slice(0, 4096);
}

/** The shipper's metrics in the Prometheus text format. */
export function shipperMetrics(m: { dropped: DropCount; pendingBytes: number; shipped: number }): string {
  const family = (name: string, type: string, help: string, value: number): string =>
    `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`;
  return [
    family(
      'meshagent_log_dropped_lines_total',
      'counter',
      'Service log lines dropped, oldest first, because the log buffer was full.',
      m.dropped.lines,
    ),
    family(
      'meshagent_log_dropped_bytes_total',
      'counter',
      'Bytes of service log lines dropped because the log buffer was full.',
      m.dropped.bytes,
    ),
    family(
      'meshagent_log_buffer_bytes',
      'gauge',
      'Bytes of service log lines buffered on disk, not yet delivered to the control plane.',
      m.pendingBytes,
    ),
    family(
      'meshagent_log_shipped_lines_total',
      'counter',
      'Service log lines delivered to the control plane by this agent process.',
      m.shipped,
    ),
  ].join('');
}
