/**
 * Small file-system helpers the drivers share: mode parsing, errno codes and the atomic file replace
 * (temporary file in the same directory, fsync, rename, fsync of the directory).
 */
import { open, rename, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, posix } from 'node:path';

/** The errno code of a Node.js file-system error (`ENOENT`, …), or undefined. */
export function errnoCode(e: unknown): string | undefined {
  return e instanceof Error ? (e as NodeJS.ErrnoException).code : undefined;
}

/**
 * Parses a declared mode into permission bits. It accepts exactly what the schema's `FileMode` allows,
 * an octal string of three digits with an optional leading 0 (`"0644"`, `"644"`); throws otherwise.
 */
export function parseMode(mode: string): number {
  if (typeof mode !== 'string' || !/^0?[0-7]{3}$/.test(mode)) {
    throw new Error(`invalid mode ${JSON.stringify(mode)}: expected an octal string such as "0644"`);
  }
  return parseInt(mode, 8);
}

/** Formats permission bits as a 4-digit octal string (`0644`) for messages. */
export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

/** Fsyncs a directory so that a rename or unlink in it is durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Replaces `path` atomically with `data` and `mode`: readers see the old or the new file, never a
 * partial one, and after return the new file survives a crash. The parent directory must exist.
 */
export async function atomicWriteFile(path: string, data: string | Uint8Array, mode: number): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.meshctl-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(data);
    await fh.chmod(mode);
    await fh.sync();
    await fh.close();
    await rename(tmp, path);
  } catch (e) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e;
  }
  await fsyncDir(dir);
}

/** The world identity of a path-based resource (`path:/etc/x`), normalised so `/a//b/` equals `/a/b`. */
export function pathKey(path: string): string {
  return `path:${posix.normalize(path).replace(/\/+$/, '') || '/'}`;
}
