/**
 * A supervised service's log file: `stateDir/logs/<id>.log`, opened in append mode and handed to the
 * process as its stdout and stderr (so the process keeps logging while no agent runs), and rotated
 * at a size cap by copy-then-truncate (`<id>.log.1` holds the previous part).
 */
import { appendFileSync, openSync } from 'node:fs';
import { copyFile, mkdir, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { safeName } from './process-record.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** The path of a service's log file. */
export function logPath(stateDir: string, id: string): string {
  return join(stateDir, 'logs', `${safeName(id)}.log`);
}

/** Opens a service's log file for appending (creating it), writes a header line, and returns the fd. */
export async function openLog(stateDir: string, id: string, header: string): Promise<number> {
  await mkdir(join(stateDir, 'logs'), { recursive: true });
  const path = logPath(stateDir, id);
  appendFileSync(path, `--- ${new Date().toISOString()} ${header}\n`, { mode: 0o640 });
  return openSync(path, 'a');
}

/** Rotates `path` when it is larger than `maxBytes`; returns whether it did. */
export async function rotateLog(path: string, maxBytes: number): Promise<boolean> {
  try {
    if ((await stat(path)).size <= maxBytes) return false;
    await copyFile(path, `${path}.1`);
    await truncate(path, 0);
    return true;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return false;
    throw e;
  }
}
