/**
 * The agent's on-disk log buffer: service log lines read but not yet acknowledged by the control plane,
 * kept in order across agent restarts and outages, bounded in size. When a new line would pass the limit
 * the OLDEST lines are dropped first; what was dropped is counted (in total, and per service until the
 * control plane has been told) and persisted. Appends are durable (fsync) when they resolve. Lines pushed
 * out while the batch holding them is being sent (the last one peeked, not yet acknowledged) count as
 * dropped only if that send failed: peeked again, or never acknowledged before a restart.
 *
 * Disk use stays under `limitBytes` plus about one segment (`segmentBytes`): delivered segments are
 * deleted whole. Every operation runs one at a time.
 */
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir } from '../../api/meta/atomic-file.ts';
import { createSerial } from '../../api/meta/serial.ts';
import type { Logger } from '../engine/types.ts';
import {
  comparePos,
  encodeRecord,
  lastSeqOf,
  listSegments,
  readRecords,
  repairTail,
  segmentName,
  type Pos,
  type Segment,
} from './buffer-segments.ts';
import { countDrop, freshState, holdDrop, loadState, saveState, settleHeld, type BufferState } from './buffer-state.ts';
import type { BufferedEntry, DropCount, LogEntry } from './log-entry.ts';

/** The default bound: 16 MiB per node. */
export const DEFAULT_LOG_BUFFER_BYTES = 16 * 1024 * 1024;

/** Options of `openLogBuffer`. */
export interface LogBufferOptions {
  dir: string;
  /** Bytes of undelivered records kept at most. Default 16 MiB. */
  limitBytes?: number;
  /** Size at which a new segment is started. Default limit/8, between 4 KiB and 1 MiB. */
  segmentBytes?: number;
  logger?: Logger;
}

/** Lines read from the buffer for one delivery. */
export interface Batch {
  stream: string;
  entries: BufferedEntry[];
  /** Where the batch ends: acknowledging it moves the buffer's start here. */
  end: Pos;
}

/** Drops per service, as reported to the control plane. */
export type ServiceDrops = Array<{ service: string } & DropCount>;

/** The open buffer (see the module comment). */
export interface LogBuffer {
  readonly stream: string;
  /** Appends lines (dropping the oldest beyond the limit); resolves once they are on disk, with what was dropped. */
  append(entries: LogEntry[]): Promise<DropCount>;
  /** The oldest undelivered lines, about `maxBytes` of them; undefined when there are none. */
  peek(maxBytes: number): Promise<Batch | undefined>;
  /** Marks a batch delivered. */
  ack(batch: Batch): Promise<void>;
  /** Bytes of undelivered records. */
  pendingBytes(): number;
  /** Everything dropped since the buffer was created. */
  dropped(): DropCount;
  /** Drops the control plane has not been told about, per service. */
  unreported(): ServiceDrops;
  /** Subtracts drops that were reported. */
  markReported(drops: ServiceDrops): Promise<void>;
  close(): Promise<void>;
}

/** Opens (or creates) the buffer in `dir`, cutting a torn last record left by a crash. */
export async function openLogBuffer(opts: LogBufferOptions): Promise<LogBuffer> {
  await mkdir(opts.dir, { recursive: true, mode: 0o700 });
  let state: BufferState | undefined;
  try {
    state = await loadState(opts.dir);
  } catch (e) {
    opts.logger?.error('Reset damaged log buffer state', { dir: opts.dir, error: (e as Error).message });
  }
  const segs = await listSegments(opts.dir);
  let lastSeq = 0;
  const last = segs[segs.length - 1];
  if (last) {
    const r = await repairTail(join(opts.dir, segmentName(last.index)));
    if (r.cut > 0)
      opts.logger?.info('Cut torn tail of log buffer', { dir: opts.dir, segment: last.index, bytes: r.cut });
    last.size = r.size;
    lastSeq = r.lastSeq ?? 0;
    for (let i = segs.length - 2; i >= 0 && !lastSeq; i--)
      lastSeq = (await lastSeqOf(join(opts.dir, segmentName(segs[i].index)))) ?? 0;
  }
  state ??= freshState(segs[0]?.index ?? 1);
  settleHeld(state, false);
  const buffer = new DiskLogBuffer(opts, state, segs, Math.max(state.seq, lastSeq) + 1);
  await buffer.normalize();
  return buffer;
}

class DiskLogBuffer implements LogBuffer {
  readonly #dir: string;
  readonly #limit: number;
  readonly #segmentBytes: number;
  readonly #state: BufferState;
  readonly #segs: Segment[];
  #nextSeq: number;
  #fh: FileHandle | undefined;
  /** Where the batch being sent ends: the last one peeked, until it is acknowledged. */
  #sending: Pos | undefined;
  readonly #serial = createSerial();

  constructor(opts: LogBufferOptions, state: BufferState, segs: Segment[], nextSeq: number) {
    this.#dir = opts.dir;
    this.#limit = opts.limitBytes ?? DEFAULT_LOG_BUFFER_BYTES;
    this.#segmentBytes = opts.segmentBytes ?? Math.min(1024 * 1024, Math.max(4096, Math.floor(this.#limit / 8)));
    this.#state = state;
    this.#segs = segs;
    this.#nextSeq = nextSeq;
  }

  get stream(): string {
    return this.#state.stream;
  }

  pendingBytes(): number {
    const total = this.#segs.filter((s) => s.index >= this.#state.head.seg).reduce((n, s) => n + s.size, 0);
    return Math.max(0, total - this.#state.head.off);
  }

  dropped(): DropCount {
    return { ...this.#state.dropped };
  }

  unreported(): ServiceDrops {
    return Object.entries(this.#state.unreported).map(([service, d]) => ({ service, ...d }));
  }

  append(entries: LogEntry[]): Promise<DropCount> {
    return this.#serial(async () => {
      const before = { ...this.#state.dropped };
      const head = { ...this.#state.head };
      const records = entries.map((e) => {
        const entry = { ...e, seq: this.#nextSeq++ };
        return { entry, buf: encodeRecord(entry) };
      });
      let bytes = records.reduce((n, r) => n + r.buf.length, 0);
      const pending = this.pendingBytes();
      if (pending + bytes > this.#limit) await this.#dropFromHead(Math.min(pending, pending + bytes - this.#limit));
      while (records.length && this.pendingBytes() + bytes > this.#limit) {
        const r = records.shift()!;
        bytes -= r.buf.length;
        this.#countDrop(r.entry);
      }
      if (records.length) await this.#write(records.map((r) => r.buf));
      const d = { lines: this.#state.dropped.lines - before.lines, bytes: this.#state.dropped.bytes - before.bytes };
      if (d.lines > 0 || comparePos(head, this.#state.head) !== 0) await this.#persist();
      return d;
    });
  }

  peek(maxBytes: number): Promise<Batch | undefined> {
    return this.#serial(async () => {
      if (this.#sending) settleHeld(this.#state, false);
      this.#sending = undefined;
      const recs = await readRecords(this.#dir, this.#segs, this.#state.head, maxBytes);
      if (!recs.length) return undefined;
      const entries = recs.flatMap((r) => (r.entry ? [r.entry] : []));
      this.#sending = recs[recs.length - 1].end;
      return { stream: this.#state.stream, entries, end: this.#sending };
    });
  }

  ack(batch: Batch): Promise<void> {
    return this.#serial(async () => {
      const delivered = this.#sending !== undefined && comparePos(batch.end, this.#sending) === 0;
      if (delivered) this.#sending = undefined;
      const settled = delivered && settleHeld(this.#state, true);
      const moved = comparePos(this.#state.head, batch.end) < 0;
      if (!moved && !settled) return;
      if (moved) this.#state.head = { ...batch.end };
      const last = batch.entries[batch.entries.length - 1];
      if (last) this.#state.seq = Math.max(this.#state.seq, last.seq);
      await this.#persist();
    });
  }

  markReported(drops: ServiceDrops): Promise<void> {
    return this.#serial(async () => {
      for (const d of drops) {
        const u = this.#state.unreported[d.service];
        if (!u) continue;
        u.lines -= d.lines;
        u.bytes -= d.bytes;
        if (u.lines <= 0) delete this.#state.unreported[d.service];
      }
      await saveState(this.#dir, this.#state);
    });
  }

  async close(): Promise<void> {
    await this.#serial(async () => {
      await this.#fh?.close();
      this.#fh = undefined;
    });
  }

  /** Moves the start past empty ends of segments, saves the state, deletes segments before it. */
  async normalize(): Promise<void> {
    await this.#serial(() => this.#persist());
  }

  /** Counts a line that left the buffer unsent; held instead while it is being sent (`inFlight`). */
  #countDrop(e: BufferedEntry, end?: Pos): void {
    const sending = end !== undefined && this.#sending !== undefined && comparePos(end, this.#sending) <= 0;
    (sending ? holdDrop : countDrop)(this.#state, e.service, Buffer.byteLength(e.line) + 1);
    this.#state.seq = Math.max(this.#state.seq, e.seq);
  }

  /** Drops the oldest records until at least `need` bytes are freed. */
  async #dropFromHead(need: number): Promise<void> {
    let freed = 0;
    while (freed < need) {
      const recs = await readRecords(this.#dir, this.#segs, this.#state.head, Math.max(need - freed, 64 * 1024));
      if (!recs.length) break;
      for (const r of recs) {
        if (freed >= need) break;
        freed += r.bytes;
        this.#state.head = { ...r.end };
        if (r.entry) this.#countDrop(r.entry, r.end);
      }
    }
  }

  /** Appends records to the last segment (starting a new one when it is full) and fsyncs. */
  async #write(bufs: Buffer[]): Promise<void> {
    let last = this.#segs[this.#segs.length - 1];
    if (!last || last.size >= this.#segmentBytes) {
      await this.#fh?.sync();
      await this.#fh?.close();
      this.#fh = undefined;
      last = { index: last ? last.index + 1 : this.#state.head.seg, size: 0 };
      this.#segs.push(last);
    }
    if (!this.#fh) {
      this.#fh = await open(join(this.#dir, segmentName(last.index)), 'a', 0o600);
      if (last.size === 0) await fsyncDir(this.#dir);
    }
    const data = Buffer.concat(bufs);
    await this.#fh.write(data);
    await this.#fh.sync();
    last.size += data.length;
  }

  /** Normalizes the start, saves the state, then deletes the segments before the start. */
  async #persist(): Promise<void> {
    const head = this.#state.head;
    for (;;) {
      const i = this.#segs.findIndex((s) => s.index >= head.seg);
      const seg = this.#segs[i];
      if (!seg) break;
      if (seg.index > head.seg) Object.assign(head, { seg: seg.index, off: 0 });
      head.off = Math.min(head.off, seg.size);
      if (head.off < seg.size || i === this.#segs.length - 1) break;
      Object.assign(head, { seg: this.#segs[i + 1].index, off: 0 });
    }
    await saveState(this.#dir, this.#state);
    while (this.#segs[0] && this.#segs[0].index < head.seg) {
      const old = this.#segs.shift()!;
      await rm(join(this.#dir, segmentName(old.index)), { force: true });
    }
  }
}
