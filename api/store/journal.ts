/**
 * The append-only journal with group commit: lines appended while a write+fdatasync is in flight are
 * collected into the next batch and made durable together with one write and one fdatasync. A promise
 * returned by `append` resolves once its line is on disk. Batches are written strictly in order, so the
 * file on disk is always a prefix of what was appended (plus, after a crash, possibly a torn last line).
 *
 * The journal is split into numbered segments (`journal-0000000001.jsonl`, ...). `rotate()` makes the
 * next batch go to a new segment, so compaction can snapshot the state and then drop the old segments
 * while writes continue.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { StoreFs } from './store-fs.ts';
import { awaitingTurns } from '../meta/loop-time.ts';

const SEGMENT = /^journal-(\d{10})\.jsonl$/;

/** The file name of a journal segment. */
export function segmentName(seq: number): string {
  return `journal-${String(seq).padStart(10, '0')}.jsonl`;
}

/** The journal segments in a store directory, oldest first. */
export function listSegments(dir: string): { seq: number; file: string }[] {
  return readdirSync(dir)
    .map((f) => ({ m: SEGMENT.exec(f), file: f }))
    .filter((x): x is { m: RegExpExecArray; file: string } => x.m !== null)
    .map((x) => ({ seq: Number(x.m[1]), file: join(dir, x.file) }))
    .sort((a, b) => a.seq - b.seq);
}

class Batch {
  readonly lines: string[] = [];
  maxRv = 0;
  #promise?: Promise<void>;
  #resolve?: () => void;
  #reject?: (e: Error) => void;

  done(): Promise<void> {
    this.#promise ??= new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    return this.#promise;
  }

  settle(err?: Error): void {
    if (err) this.#reject?.(err);
    else this.#resolve?.();
  }
}

/** Options of `Journal.open`. */
export interface JournalOptions {
  dir: string;
  /** The file-system calls that write (node:fs, or a test's power-loss simulation). */
  fs: StoreFs;
  /** The segment to append to (created when absent). */
  seq: number;
  /** Its current size in bytes. */
  size: number;
  /** The size of all existing segments (this one included). */
  totalSize: number;
  /** Called with the highest resourceVersion of each batch once it is durable, before its promises resolve. */
  onDurable: (rv: number) => void;
}

/** The group-commit journal writer (see the file comment). */
export class Journal {
  readonly #dir: string;
  readonly #fs: StoreFs;
  readonly #onDurable: (rv: number) => void;
  #fd: number;
  #seq: number;
  #batch = new Batch();
  #inflight?: Batch;
  #running?: Promise<void>;
  #rotation?: { promise: Promise<number>; resolve: (seq: number) => void; reject: (e: Error) => void };
  #failed?: Error;
  #closed = false;
  /** Bytes in the current segment. */
  segmentBytes: number;
  /** Bytes in all segments written through this journal, plus those that existed at open. */
  bytes: number;
  /** Batches (write + fdatasync) and lines written since open. */
  commits = 0;
  lines = 0;

  private constructor(opts: JournalOptions, fd: number) {
    this.#dir = opts.dir;
    this.#fs = opts.fs;
    this.#onDurable = opts.onDurable;
    this.#fd = fd;
    this.#seq = opts.seq;
    this.segmentBytes = opts.size;
    this.bytes = opts.totalSize;
  }

  /** Opens (or creates, fsyncing the directory) the segment to append to. */
  static async open(opts: JournalOptions): Promise<Journal> {
    const fd = await opts.fs.open(join(opts.dir, segmentName(opts.seq)), 'a');
    await opts.fs.fsyncDir(opts.dir);
    return new Journal(opts, fd);
  }

  /** The segment being appended to. */
  get seq(): number {
    return this.#seq;
  }

  /** Queues a line (without newline); resolves once it is durable. */
  append(line: string, rv: number): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (this.#closed) return Promise.reject(new Error('the journal is closed'));
    const b = this.#batch;
    b.lines.push(line);
    if (rv > b.maxRv) b.maxRv = rv;
    this.#kick();
    return b.done();
  }

  /** Resolves once every line appended so far is durable. */
  flushed(): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (this.#batch.lines.length > 0) return this.#batch.done();
    return this.#inflight ? this.#inflight.done() : Promise.resolve();
  }

  /** Makes the next batch go to a new segment; resolves with its number once it exists durably. */
  rotate(): Promise<number> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (!this.#rotation) {
      let resolve!: (seq: number) => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<number>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.#rotation = { promise, resolve, reject };
    }
    this.#kick();
    return this.#rotation.promise;
  }

  /** Flushes what is queued and closes the file. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#running;
    await this.#fs.close(this.#fd);
  }

  #kick(): void {
    if (this.#running) return;
    this.#running = new Promise<void>((resolve) => queueMicrotask(() => void this.#run().finally(resolve)));
  }

  async #run(): Promise<void> {
    // While commits are queued, the loop is not held for batching (api/meta/loop-time.ts): each waits for the disk.
    const done = awaitingTurns();
    try {
      for (;;) {
        if (this.#rotation) await this.#switchSegment();
        const b = this.#batch;
        if (b.lines.length === 0) break;
        this.#batch = new Batch();
        this.#inflight = b;
        await this.#commit(b);
        this.#inflight = undefined;
      }
    } catch (e) {
      this.#fail(e instanceof Error ? e : new Error(String(e)));
    } finally {
      done();
      this.#running = undefined;
    }
  }

  async #commit(b: Batch): Promise<void> {
    const buf = Buffer.from(b.lines.join('\n') + '\n');
    await this.#fs.write(this.#fd, buf);
    await this.#fs.dataSync(this.#fd);
    this.segmentBytes += buf.length;
    this.bytes += buf.length;
    this.commits++;
    this.lines += b.lines.length;
    try {
      this.#onDurable(b.maxRv);
    } catch {
      // The listener (the store publishing watch events) handles its own errors; the write is durable regardless.
    }
    b.settle();
  }

  async #switchSegment(): Promise<void> {
    const rotation = this.#rotation!;
    const seq = this.#seq + 1;
    const fd = await this.#fs.open(join(this.#dir, segmentName(seq)), 'ax');
    await this.#fs.fsyncDir(this.#dir);
    const old = this.#fd;
    this.#fd = fd;
    this.#seq = seq;
    this.segmentBytes = 0;
    this.#rotation = undefined;
    await this.#fs.close(old);
    rotation.resolve(seq);
  }

  #fail(err: Error): void {
    this.#failed = new Error(`the store journal failed, no write is accepted until restart: ${err.message}`, {
      cause: err,
    });
    this.#inflight?.settle(this.#failed);
    this.#batch.settle(this.#failed);
    this.#rotation?.reject(this.#failed);
    this.#rotation = undefined;
  }
}
