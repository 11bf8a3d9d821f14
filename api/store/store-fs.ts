/**
 * The file-system calls through which the store changes its directory: everything that writes, syncs,
 * renames or removes. Reads (readFile, readdir) go to node:fs directly — they see what is on disk either
 * way. `nodeStoreFs` is the real thing and the default; tests pass a power-loss simulation
 * (testdata/power-loss-fs.ts) to `openStore`, which records these calls and can discard everything not
 * yet made durable. The methods are the plain functions of fs-util.ts, so production pays one property look-up.
 */
import { open, rename, rm, unlink } from 'node:fs/promises';
import { fsyncDir } from '../meta/atomic-file.ts';
import { closeFile, dataSync, openFile, writeAll } from './fs-util.ts';

/** The store's writing file-system calls (see the file comment). */
export interface StoreFs {
  /** Opens a file with the given flags ('a', 'ax', 'w'), mode 0600. */
  open(path: string, flags: string): Promise<number>;
  /** Writes the whole buffer at the file's position (O_APPEND: at the end). */
  write(fd: number, buf: Buffer): Promise<void>;
  /** fdatasync(2). */
  dataSync(fd: number): Promise<void>;
  close(fd: number): Promise<void>;
  /** fsync(2) of a directory: entries created, renamed or removed in it become durable. */
  fsyncDir(dir: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Removes a file (ENOENT is an error). */
  unlink(path: string): Promise<void>;
  /** Removes a file; a missing one is not an error. */
  remove(path: string): Promise<void>;
  /** Truncates a file to `size` bytes and fsyncs it. */
  truncate(path: string, size: number): Promise<void>;
}

/** The real file system (node:fs). */
export const nodeStoreFs: StoreFs = {
  open: openFile,
  write: writeAll,
  dataSync,
  close: closeFile,
  fsyncDir,
  rename,
  unlink,
  remove: (path) => rm(path, { force: true }),
  truncate: truncateAndSync,
};

async function truncateAndSync(path: string, size: number): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.truncate(size);
    await fh.sync();
  } finally {
    await fh.close();
  }
}
