/**
 * Reads a process's memory and CPU figures from /proc (Linux), for the agent benchmarks' RSS and CPU rows.
 */
import { readFileSync } from 'node:fs';

/** Resident memory of a process, in MiB: now (VmRSS) and its peak so far (VmHWM). */
export interface MemoryFigures {
  rssMiB: number;
  hwmMiB: number;
}

/** Reads VmRSS and VmHWM from /proc/<pid>/status; throws when the process is gone. */
export function memoryOf(pid: number | 'self'): MemoryFigures {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
    if (!m) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(m[1]);
  };
  return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024 };
}

/** CPU seconds (user + system) a process used so far, from /proc/<pid>/stat (USER_HZ = 100). */
export function cpuSecondsOf(pid: number | 'self'): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number); // fields from #3 (state) on
  return (fields[11] + fields[12]) / 100; // utime, stime (#14, #15)
}

/** Formats MiB with one decimal. */
export function mib(value: number): string {
  return Number.isFinite(value) ? value.toFixed(1) : 'n/a';
}

/**
 * The kernel's count of connections dropped because a listener's accept queue was full (TcpExt ListenOverflows in
 * /proc/net/netstat, machine-wide: the bench's control plane is the one busy listener), undefined when not readable.
 */
export function listenOverflows(): number | undefined {
  try {
    const [names, values] = readFileSync('/proc/net/netstat', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('TcpExt:'))
      .map((l) => l.split(/\s+/));
    const i = names.indexOf('ListenOverflows');
    return i > 0 ? Number(values[i]) : undefined;
  } catch {
    return undefined;
  }
}
