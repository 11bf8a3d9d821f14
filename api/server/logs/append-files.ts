/**
 * Appends to files through a bounded set of kept-open descriptors (least recently used closed first), each
 * append one `write(2)` to the page cache — no fsync (log-files.ts says what an appended line survives).
 *
 * Synchronous on purpose: an append of a few hundred bytes to the page cache is one syscall of a few µs on
 * the event loop, while the same through the libuv pool costs a hand-off to a pool thread and back per call
 * (open, write, close: three of them). It also keeps the cache race-free: a descriptor is never in use while
 * another caller evicts it. A missing parent directory is created on the first append that finds it missing
 * (not checked on every append).
 */
import { closeSync, fstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { isMissing } from '../../meta/errno.ts';

/** Options of `AppendFiles`. */
export interface AppendFilesOptions {
  /** How many descriptors are kept open at most. Default 256. */
  maxOpen?: number;
  /** The mode of created files. Default 0o600. */
  fileMode?: number;
  /** The mode of created directories. Default 0o700. */
  dirMode?: number;
}

interface Open {
  fd: number;
  /** The file's size as this process has written it (fstat at its first open, plus every append since). */
  size: number;
}

/** Kept-open append descriptors (see the module comment). */
export class AppendFiles {
  readonly #maxOpen: number;
  readonly #fileMode: number;
  readonly #dirMode: number;
  /** In least-recently-used order (a Map iterates in insertion order; a use re-inserts). */
  readonly #open = new Map<string, Open>();
  /**
   * The size of each file whose descriptor was closed to make room, as this process wrote it: reopened, it needs no
   * fstat, and `size` needs no reopening (a log POST asks a file's size before it appends). `forget` drops it.
   */
  readonly #closedSizes = new Map<string, number>();

  constructor(opts: AppendFilesOptions = {}) {
    this.#maxOpen = Math.max(1, opts.maxOpen ?? 256);
    this.#fileMode = opts.fileMode ?? 0o600;
    this.#dirMode = opts.dirMode ?? 0o700;
  }

  /** The size of the file at `path` (0 for a file that does not exist yet, which this creates). */
  size(path: string): number {
    return this.#open.get(path)?.size ?? this.#closedSizes.get(path) ?? this.#get(path).size;
  }

  /** Appends `data` to the file at `path` (created, with its directory, when missing); returns its new size. */
  append(path: string, data: Uint8Array): number {
    const f = this.#get(path);
    for (let off = 0; off < data.length;) off += writeSync(f.fd, data, off);
    f.size += data.length;
    return f.size;
  }

  /** Closes the descriptor of `path`, if open: call it before renaming or replacing the file. */
  forget(path: string): void {
    this.#closedSizes.delete(path);
    this.#close(path);
  }

  /** How many descriptors are open (for tests). */
  get openCount(): number {
    return this.#open.size;
  }

  /** Closes every descriptor (the next append reopens). */
  close(): void {
    for (const path of [...this.#open.keys()]) this.forget(path);
    this.#closedSizes.clear();
  }

  #close(path: string): void {
    const f = this.#open.get(path);
    if (!f) return;
    this.#open.delete(path);
    closeSync(f.fd);
  }

  #get(path: string): Open {
    const hit = this.#open.get(path);
    if (hit) {
      this.#open.delete(path);
      this.#open.set(path, hit);
      return hit;
    }
    const fd = this.#openFd(path);
    const f = { fd, size: this.#closedSizes.get(path) ?? fstatSync(fd).size };
    this.#closedSizes.delete(path);
    this.#open.set(path, f);
    for (const [lru, { size }] of this.#open) {
      if (this.#open.size <= this.#maxOpen) break;
      this.#closedSizes.set(lru, size);
      this.#close(lru);
    }
    return f;
  }

  #openFd(path: string): number {
    try {
      return openSync(path, 'a', this.#fileMode);
    } catch (e) {
      if (!isMissing(e)) throw e;
      mkdirSync(dirname(path), { recursive: true, mode: this.#dirMode });
      return openSync(path, 'a', this.#fileMode);
    }
  }
}
