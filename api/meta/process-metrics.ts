/**
 * The process's own gauges in the Prometheus text format, named as prom-client's default metrics name them, so
 * that the dashboards and alerts operators already have for Node services read them unchanged:
 *
 *   process_cpu_user_seconds_total, process_cpu_system_seconds_total, process_cpu_seconds_total   counters
 *   process_start_time_seconds                                         gauge: since the Unix epoch
 *   process_resident_memory_bytes                                      gauge: RSS (what the OOM killer counts)
 *   nodejs_heap_size_total_bytes, nodejs_heap_size_used_bytes          gauges: the V8 heap, reserved and live
 *   nodejs_heap_space_size_total_bytes{space}, …_used_bytes{space}     gauges: per V8 space (old, new, code, large…)
 *   nodejs_external_memory_bytes                                       gauge: memory outside the heap held by JS
 *                                                                       objects (Buffers, TLS sockets' native parts)
 *   nodejs_array_buffers_bytes                                         gauge: of which ArrayBuffers and Buffers (not
 *                                                                       a prom-client default; from process.memoryUsage)
 *
 * RSS minus the heap and external memory is what V8 and Node do not account for: code, stacks, OpenSSL's
 * per-connection buffers, the allocator's free lists. Reading them costs microseconds (no heap walk).
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { metricFamily } from './prometheus-text.ts';

/** When this process started, in seconds since the Unix epoch. */
const START_TIME_S = Math.round(Date.now() / 1000 - process.uptime());

const gauge = (name: string, help: string, value: number): string => metricFamily(name, 'gauge', help, [['', value]]);

function cpuFamilies(): string {
  const cpu = process.cpuUsage();
  const user = cpu.user / 1e6;
  const system = cpu.system / 1e6;
  return [
    metricFamily('process_cpu_user_seconds_total', 'counter', 'Total user CPU time spent in seconds.', [['', user]]),
    metricFamily('process_cpu_system_seconds_total', 'counter', 'Total system CPU time spent in seconds.', [
      ['', system],
    ]),
    metricFamily('process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.', [
      ['', user + system],
    ]),
    gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', START_TIME_S),
  ].join('');
}

function heapSpaceFamilies(): string {
  const spaces = getHeapSpaceStatistics().map((s) => ({
    labels: `{space="${s.space_name.replace(/_space$/, '')}"}`,
    total: s.space_size,
    used: s.space_used_size,
  }));
  return [
    metricFamily(
      'nodejs_heap_space_size_total_bytes',
      'gauge',
      'Process heap space size total from Node.js in bytes.',
      spaces.map((s) => [s.labels, s.total]),
    ),
    metricFamily(
      'nodejs_heap_space_size_used_bytes',
      'gauge',
      'Process heap space size used from Node.js in bytes.',
      spaces.map((s) => [s.labels, s.used]),
    ),
  ].join('');
}

/** The process's CPU and memory families, read now. */
export function processMetrics(): string {
  const mem = process.memoryUsage();
  return [
    cpuFamilies(),
    gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', mem.rss),
    gauge('nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', mem.heapTotal),
    gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', mem.heapUsed),
    gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', mem.external),
    gauge('nodejs_array_buffers_bytes', 'Memory allocated for ArrayBuffers and Buffers in bytes.', mem.arrayBuffers),
    heapSpaceFamilies(),
  ].join('');
}
