/**
 * Writes small files so that a crash at any instant leaves either the old or the new content: a temporary
 * file in the same directory, fsync, rename over the target, fsync of the directory.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Atomically replaces `path` with `data`, with the given mode (e.g. 0o600 for secrets). */
export function writeFileAtomic(path: string, data: string | Buffer, mode: number): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${basename(path)}.tmp-${process.pid}`);
  const fd = openSync(tmp, 'w', mode);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
  syncDirSync(dir);
}

/** fsync of a directory, so that a rename in it survives a crash. */
export function syncDirSync(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
