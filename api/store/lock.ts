/**
 * The store directory's lock: a `LOCK` file naming the owner — `<pid> <start time> <boot id> <nonce>` — created
 * atomically (link(2) fails when it exists, like O_EXCL), so two processes (or two opens in one process)
 * cannot own the same store (a context owns its store, ADR 0045). The lock is held while that very process
 * runs: same pid, same /proc start time, same boot (api/meta/process-identity.ts). A pid alone is not
 * enough: a container's control plane is PID 1 again after a restart, and pids are reused after a reboot.
 * Any other lock is stale (its owner crashed) and is taken over; an older lock holding only a pid counts as
 * held while that pid runs, unless it is this process's own pid (which no open in this process holds).
 * Where /proc is missing the start time is empty and a running pid counts as the owner. Two processes
 * taking over the same stale lock at the same instant is not guarded against.
 */
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { errnoCode } from '../meta/errno.ts';
import { currentBootId, isSameProcess, procStat } from '../meta/process-identity.ts';

/** A held lock; `release()` removes the file (idempotent). */
export interface DirLock {
  readonly path: string;
  release(): void;
}

/** The owner a LOCK file names; startTime and boot are absent in a lock holding only a pid. */
interface Owner {
  pid: number;
  startTime?: string;
  boot?: string;
}

/** LOCK files held by opens in this process, with the nonce each wrote (its fourth field). */
const heldHere = new Map<string, string>();

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

/** The nonce of the LOCK file at `path`, if there is one. */
function nonceOf(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim().split(' ')[3];
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return undefined;
    throw e;
  }
}

/** Creates the lock file atomically naming this process (written to a temp file, then hard-linked). */
function tryCreate(path: string, nonce: string): boolean {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, `${process.pid} ${procStat(process.pid)?.startTime ?? ''} ${currentBootId()} ${nonce}\n`);
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

function readOwner(path: string): Owner | undefined {
  try {
    const [pidText, startTime, boot] = readFileSync(path, 'utf8').trim().split(' ');
    const pid = Number.parseInt(pidText, 10);
    return Number.isFinite(pid) && pid > 0 ? { pid, startTime, boot } : undefined;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return undefined;
    throw e;
  }
}

/** Whether the process a LOCK file names still runs (see the file comment). */
function ownerRuns(o: Owner): boolean {
  if (o.startTime === undefined) return o.pid !== process.pid && isRunning(o.pid);
  if (o.startTime === '') return isRunning(o.pid);
  return isSameProcess(o.pid, o.startTime, o.boot || undefined);
}

/**
 * Takes the lock of a store directory, or throws an Error naming the process that holds it.
 * A stale lock (its process gone, or unreadable content) is removed and taken over.
 */
export function lockDir(dir: string): DirLock {
  const path = resolve(join(dir, 'LOCK'));
  const mine = heldHere.get(path);
  // An open in this process holds the store while its LOCK file is still there (a directory wiped or rebuilt
  // under it, as a simulated power loss does, leaves nothing to hold).
  if (mine !== undefined && nonceOf(path) === mine)
    throw new Error(`store ${dir} is locked by this process (opened twice?): only one process may own a store`);
  const nonce = randomBytes(8).toString('hex');
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(path, nonce)) {
      heldHere.set(path, nonce);
      let held = true;
      return {
        path,
        release: () => {
          if (!held) return;
          held = false;
          if (heldHere.get(path) === nonce) heldHere.delete(path);
          if (nonceOf(path) === nonce) removeLock(path); // never another open's lock
        },
      };
    }
    const owner = readOwner(path);
    if (owner !== undefined && ownerRuns(owner)) {
      throw new Error(
        `store ${dir} is locked by process ${owner.pid}: only one process may own a store (lock file ${path})`,
      );
    }
    removeLock(path);
  }
  throw new Error(`store ${dir}: could not take the lock file ${path} (another process keeps racing for it)`);
}
