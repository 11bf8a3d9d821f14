/**
 * The store directory's lock: a `LOCK` file holding the owner's pid, created atomically (link(2) fails when
 * it exists, like O_EXCL), so two processes (or two opens in one process) cannot own the same store (a
 * context owns its store, ADR 0045). A lock whose pid is no longer running is stale (the owner crashed) and
 * is taken over. Two processes taking over the same stale lock at the same instant is not guarded against.
 */
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { errnoCode } from '../meta/errno.ts';

/** A held lock; `release()` removes the file (idempotent). */
export interface DirLock {
  readonly path: string;
  release(): void;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) === 'EPERM';
  }
}

function removeLock(path: string): void {
  try {
    unlinkSync(path);
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT') throw e;
  }
}

/** Creates the lock file atomically with our pid in it (written to a temp file, then hard-linked). */
function tryCreate(path: string): boolean {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, `${process.pid}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    if (errnoCode(e) === 'EEXIST') return false;
    throw e;
  } finally {
    removeLock(tmp);
  }
}

function ownerPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isFinite(pid) && pid > 0 ? pid : undefined;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return undefined;
    throw e;
  }
}

/**
 * Takes the lock of a store directory, or throws an Error naming the process that holds it.
 * A stale lock (dead pid, or unreadable content) is removed and taken over.
 */
export function lockDir(dir: string): DirLock {
  const path = join(dir, 'LOCK');
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(path)) {
      let held = true;
      return {
        path,
        release: () => {
          if (held) {
            held = false;
            removeLock(path);
          }
        },
      };
    }
    const pid = ownerPid(path);
    if (pid !== undefined && isRunning(pid)) {
      const who = pid === process.pid ? 'this process (opened twice?)' : `process ${pid}`;
      throw new Error(`store ${dir} is locked by ${who}: only one process may own a store (lock file ${path})`);
    }
    removeLock(path);
  }
  throw new Error(`store ${dir}: could not take the lock file ${path} (another process keeps racing for it)`);
}
