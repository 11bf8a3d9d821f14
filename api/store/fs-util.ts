/**
 * Small promise wrappers over the callback `fs` API (cheaper than FileHandle on the hot path) and the
 * durability helpers the store needs: write a whole buffer, fdatasync (a directory's fsync is
 * api/meta/atomic-file.ts `fsyncDir`).
 */
import { close, fdatasync, open, write } from 'node:fs';

/** Writes the whole buffer at the file's current position (O_APPEND files: at the end). */
export function writeAll(fd: number, buf: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (offset: number): void => {
      write(fd, buf, offset, buf.length - offset, null, (err, n) => {
        if (err) reject(err);
        else if (offset + n < buf.length) step(offset + n);
        else resolve();
      });
    };
    step(0);
  });
}

/** fdatasync(2): the file's data (and the metadata needed to read it back) is on disk. */
export function dataSync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}

/** Opens a file with the given flags (e.g. 'ax', 'a', 'w'). */
export function openFile(path: string, flags: string): Promise<number> {
  return new Promise((resolve, reject) => open(path, flags, 0o600, (err, fd) => (err ? reject(err) : resolve(fd))));
}

/** Closes a file descriptor. */
export function closeFile(fd: number): Promise<void> {
  return new Promise((resolve, reject) => close(fd, (err) => (err ? reject(err) : resolve())));
}
