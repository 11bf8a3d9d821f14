/**
 * The pid file the process supervisor keeps per service in its state directory, and the /proc checks
 * that decide whether a recorded pid is still the process it started (same boot, same start time) — so a
 * new agent can adopt it and never signals an unrelated process that reused the pid. Not the argv: a
 * process may rewrite it (setproctitle, exec from a wrapper, a shebang script shows its interpreter).
 * The start-time and boot checks live in api/meta/process-identity.ts (the store's lock uses them too).
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { RestartPolicy } from '../../api/v1alpha1/generated/host-resource.ts';
import { writeFileAtomic } from '../../api/meta/atomic-file.ts';
import { errnoCode } from '../../api/meta/errno.ts';

export { currentBootId, isSameProcess, procStat } from '../../api/meta/process-identity.ts';

/** What the supervisor remembers about a service's process, durably, across agent restarts. */
export interface ProcessRecord {
  id: string;
  pid: number;
  /** Field 22 of /proc/<pid>/stat: with the pid and the boot, identifies one process for its whole life. */
  startTime: string;
  /** /proc/sys/kernel/random/boot_id when it was started (start times restart from zero at every boot). */
  bootId?: string;
  command: string[];
  env: Record<string, string>;
  cwd: string;
  /** The agent's root the working directory must resolve inside (absent in records of older agents). */
  root?: string;
  restart: RestartPolicy;
  fingerprint: string;
  startedAt: string;
  /** Set when the process exited and the restart policy says not to start it again. */
  exited?: { code: number | null; signal: string | null; at: string };
}

/** A file-name-safe form of a resource id (every byte outside `[A-Za-z0-9_-]` percent-encoded). */
export function safeName(id: string): string {
  return Array.from(Buffer.from(id, 'utf8'), (b) => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9_-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
}

/** The path of a service's pid file. */
export function recordPath(stateDir: string, id: string): string {
  return join(stateDir, 'services', `${safeName(id)}.json`);
}

/** Reads a service's pid file; undefined when there is none. */
export async function readRecord(stateDir: string, id: string): Promise<ProcessRecord | undefined> {
  try {
    return JSON.parse(await readFile(recordPath(stateDir, id), 'utf8')) as ProcessRecord;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return undefined;
    throw new Error(`unreadable pid file ${recordPath(stateDir, id)}: ${(e as Error).message}`);
  }
}

/** Writes a service's pid file atomically and durably. */
export async function writeRecord(stateDir: string, rec: ProcessRecord): Promise<void> {
  await mkdir(join(stateDir, 'services'), { recursive: true });
  await writeFileAtomic(recordPath(stateDir, rec.id), JSON.stringify(rec, null, 2) + '\n', { mode: 0o600 });
}

/** Deletes a service's pid file (absent is fine). */
export async function deleteRecord(stateDir: string, id: string): Promise<void> {
  await unlink(recordPath(stateDir, id)).catch((e: unknown) => {
    if (errnoCode(e) !== 'ENOENT') throw e;
  });
}

/** The argv of a live pid from /proc/<pid>/cmdline, or undefined. */
export function procArgv(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw === '' ? [] : raw.replace(/\0$/, '').split('\0');
  } catch {
    return undefined;
  }
}
