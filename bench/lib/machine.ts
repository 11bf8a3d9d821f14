/**
 * Describes the machine and the filesystem a benchmark ran on, for RESULTS.md.
 */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { readFileSync, statSync } from 'node:fs';

/** The `df -T` line (device, type, size, mount) of the filesystem holding `path`. */
export function dfLine(path: string): string {
  try {
    const out = execFileSync('df', ['-T', '-h', path], { encoding: 'utf8' }).trim().split('\n');
    return out[out.length - 1].replace(/\s+/g, ' ');
  } catch {
    return 'df unavailable';
  }
}

/** True when both paths are on the same filesystem (same st_dev). */
export function sameFilesystem(a: string, b: string): boolean {
  return statSync(a).dev === statSync(b).dev;
}

/** nproc, CPU model, memory and Node version, as markdown list items. */
export function machineLines(projectDir: string): string[] {
  const nproc = execFileSync('nproc', { encoding: 'utf8' }).trim();
  return [
    `- CPUs (nproc): ${nproc} × ${cpus()[0]?.model ?? 'unknown'}`,
    `- memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- node: ${process.version} (${process.platform}/${process.arch})`,
    `- disk (df -T of the project folder): \`${dfLine(projectDir)}\``,
  ];
}

/** CPU seconds used so far: by the whole machine (busy, from /proc/stat) and by this process with its waited-for children. */
export interface CpuSnapshot {
  machineBusy: number;
  own: number;
  at: number;
}

/** Reads the CPU counters (Linux; zeros elsewhere). Ticks are USER_HZ = 100 on Linux. */
export function cpuSnapshot(): CpuSnapshot {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const busy = cpu.reduce((a, b) => a + b, 0) - cpu[3] - (cpu[4] ?? 0); // minus idle and iowait
    const self = readFileSync('/proc/self/stat', 'utf8');
    const fields = self
      .slice(self.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number); // fields from #3 (state) on
    const own = fields[11] + fields[12] + fields[13] + fields[14]; // utime stime cutime cstime (#14–#17)
    return { machineBusy: busy / 100, own: own / 100, at: Date.now() };
  } catch {
    return { machineBusy: 0, own: 0, at: Date.now() };
  }
}

/** How much CPU other processes used between two snapshots, as a markdown phrase. */
export function otherCpu(a: CpuSnapshot, b: CpuSnapshot): string {
  const others = Math.max(0, b.machineBusy - a.machineBusy - (b.own - a.own));
  const secs = (b.at - a.at) / 1000;
  const share = secs > 0 ? (100 * others) / (secs * cpus().length) : 0;
  return `${others.toFixed(1)} CPU-seconds used by other processes during the ${secs.toFixed(0)} s run (${share.toFixed(0)} % of the machine's capacity)`;
}
