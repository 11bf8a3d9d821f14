/**
 * A supervised service's log file: `stateDir/logs/<id>.log`, opened in append mode and handed to the
 * process as its stdout and stderr (so the process keeps logging while no agent runs), and rotated
 * at a size cap by copy-then-truncate (`<id>.log.1` holds the previous part). Symlinks are never followed
 * there: a log path that is a link (or under a linked `logs/`) is refused, so nothing is written elsewhere.
 */
import { closeSync, constants, lstatSync, openSync, writeSync } from 'node:fs';
import { copyFile, lstat, mkdir, rm, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { safeName } from './process-record.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** The path of a service's log file. */
export function logPath(stateDir: string, id: string): string {
  return join(stateDir, 'logs', `${safeName(id)}.log`);
}

/** Opens a service's log file for appending (creating it), writes a header line, and returns the fd. */
export async function openLog(stateDir: string, id: string, header: string): Promise<number> {
  const dir = join(stateDir, 'logs');
  await mkdir(dir, { recursive: true });
  const path = logPath(stateDir, id);
  if (lstatSync(dir).isSymbolicLink()) throw escapes(path, `${dir} is a symlink`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o640);
  } catch (e) {
    if (errnoCode(e) === 'ELOOP') throw escapes(path, 'it is a symlink');
    throw e;
  }
  try {
    writeSync(fd, `--- ${new Date().toISOString()} ${header}\n`);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return fd;
}

function escapes(path: string, why: string): Error {
  return new Error(`log file ${path} escapes the state directory: ${why}`);
}

/** Rotates `path` when it is larger than `maxBytes`; returns whether it did. */
export async function rotateLog(path: string, maxBytes: number): Promise<boolean> {
  try {
    if ((await stat(path)).size <= maxBytes) return false;
    if ((await lstat(path)).isSymbolicLink()) throw escapes(path, 'it is a symlink');
    await rm(`${path}.1`, { force: true });
    await copyFile(path, `${path}.1`, constants.COPYFILE_EXCL);
    await truncate(path, 0);
    return true;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return false;
    throw e;
  }
}
