/**
 * The one atomic file write: a temporary file in the same directory, written, given its mode, fsync'd,
 * renamed over the target, then the directory fsync'd. A crash at any instant leaves the old or the new
 * content, never a mix, and once the call returns the new file survives a crash. Everything that replaces
 * a small file (certificates, meshconfigs, agent records, log cursors, declared files) writes through here.
 * The parent directory must exist. A synchronous twin serves start-up code that is synchronous throughout.
 */
import { randomBytes } from 'node:crypto';
import { close, closeSync, fchmodSync, fsync, fsyncSync, open, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open as openHandle, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Options of `writeFileAtomic`. */
export interface WriteFileAtomicOptions {
  /** The new file's permission bits (e.g. 0o600 for secrets), set exactly: the umask does not apply. */
  mode: number;
}

/** A fresh temporary name beside `path` (hidden; unique per process and call). */
function tempPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.meshctl-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
}

/** Atomically and durably replaces `path` with `data`, with exactly `opts.mode`. */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  opts: WriteFileAtomicOptions,
): Promise<void> {
  const tmp = tempPath(path);
  const fh = await openHandle(tmp, 'wx', opts.mode);
  try {
    await fh.writeFile(data);
    await fh.chmod(opts.mode);
    await fh.sync();
    await fh.close();
    await rename(tmp, path);
  } catch (e) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    throw e;
  }
  await fsyncDir(dirname(path));
}

/** `writeFileAtomic` for synchronous code (start-up, `meshctl init`): the same steps, blocking. */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, opts: WriteFileAtomicOptions): void {
  const tmp = tempPath(path);
  const fd = openSync(tmp, 'wx', opts.mode);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
    fchmodSync(fd, opts.mode);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
  fsyncDirSync(dirname(path));
}

/**
 * fsync(2) of a directory, so that files created, renamed or removed in it survive a crash. Callback
 * `fs` rather than a FileHandle: the store calls it on its commit path, where this is measurably cheaper.
 */
export async function fsyncDir(dir: string): Promise<void> {
  const fd = await new Promise<number>((resolve, reject) =>
    open(dir, 'r', (err, d) => (err ? reject(err) : resolve(d))),
  );
  try {
    await new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
  } finally {
    await new Promise<void>((resolve, reject) => close(fd, (err) => (err ? reject(err) : resolve())));
  }
}

/** `fsyncDir` for synchronous code. */
export function fsyncDirSync(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
