/**
 * Which process a pid is: /proc's start time (field 22 of /proc/<pid>/stat) and the boot id together
 * identify one process for its whole life, where a pid alone may be reused — after a reboot, or by a
 * container's next PID 1. The agent's process records and the store's lock both rely on it.
 */
import { readFileSync } from 'node:fs';

/** The start time and state of a live pid from /proc, or undefined when there is no such process. */
export function procStat(pid: number): { startTime: string; state: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', startTime: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

let bootId: string | undefined;

/** This boot's id (/proc/sys/kernel/random/boot_id), or '' where the kernel does not provide one. */
export function currentBootId(): string {
  if (bootId === undefined) {
    try {
      bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      bootId = '';
    }
  }
  return bootId;
}

/** Whether `pid` is alive (not a zombie) and is the process started at `startTime` during boot `boot` (when known). */
export function isSameProcess(pid: number, startTime: string, boot?: string): boolean {
  if (boot !== undefined && boot !== currentBootId()) return false;
  const st = procStat(pid);
  return !!st && st.state !== 'Z' && st.state !== 'X' && st.startTime === startTime;
}
