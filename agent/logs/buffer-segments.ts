/**
 * The files of the agent's log buffer: numbered segment files (`0000000001.seg`, …) of JSON lines, one
 * buffered log line each (`{"q":seq,"s":service,"t":time,"l":text}`), appended in order and deleted
 * whole once everything in them was delivered or dropped. Only the last segment can be torn by a crash
 * (a segment is fsynced before the next one is started); `repairTail` cuts it back to its last whole line.
 */
import { open, readdir, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import type { BufferedEntry } from './log-entry.ts';
import { readAt } from './read-at.ts';

/** A place in the buffer: a segment's number and a byte offset in it. */
export interface Pos {
  seg: number;
  off: number;
}

/** A segment file's number and its size in bytes. */
export interface Segment {
  index: number;
  size: number;
}

/** One record read from the buffer: the entry (undefined when the line was damaged), its size and where it ends. */
export interface ReadRecord {
  entry?: BufferedEntry;
  bytes: number;
  end: Pos;
}

/** The biggest record the reader expects: a capped line (16 KiB) fully escaped, with room to spare. */
const MAX_RECORD_BYTES = 256 * 1024;

/** The file name of segment `index`. */
export function segmentName(index: number): string {
  return `${String(index).padStart(10, '0')}.seg`;
}

/** Compares two positions (negative: `a` comes first). */
export function comparePos(a: Pos, b: Pos): number {
  return a.seg === b.seg ? a.off - b.off : a.seg - b.seg;
}

/** Encodes an entry as its record line (with the newline). */
export function encodeRecord(e: BufferedEntry): Buffer {
  return Buffer.from(JSON.stringify({ q: e.seq, s: e.service, t: e.time, l: e.line }) + '\n', 'utf8');
}

/** Decodes a record line (without its newline); undefined when it is not a whole record. */
export function decodeRecord(line: string): BufferedEntry | undefined {
  try {
    const r = JSON.parse(line) as { q?: unknown; s?: unknown; t?: unknown; l?: unknown };
    if (typeof r.q !== 'number' || typeof r.s !== 'string' || typeof r.t !== 'string' || typeof r.l !== 'string')
      return undefined;
    return { seq: r.q, service: r.s, time: r.t, line: r.l };
  } catch {
    return undefined;
  }
}

/** The segments in `dir`, in order. */
export async function listSegments(dir: string): Promise<Segment[]> {
  const names = (await readdir(dir)).filter((n) => /^\d{10}\.seg$/.test(n)).sort();
  return Promise.all(
    names.map(async (n) => ({ index: Number(n.slice(0, 10)), size: (await stat(join(dir, n))).size })),
  );
}

/**
 * Cuts a segment back to its last whole, readable record (a crash may have left half a line or zeros) and
 * returns its new size and the sequence number of its last record.
 */
export async function repairTail(path: string): Promise<{ size: number; lastSeq?: number; cut: number }> {
  const fh = await open(path, 'r');
  let buf: Buffer;
  try {
    buf = await fh.readFile();
  } finally {
    await fh.close();
  }
  let good = 0;
  let lastSeq: number | undefined;
  for (let start = 0; start < buf.length;) {
    const nl = buf.indexOf(10, start);
    if (nl < 0) break;
    const entry = decodeRecord(buf.toString('utf8', start, nl));
    if (!entry) break;
    lastSeq = entry.seq;
    good = start = nl + 1;
  }
  if (good < buf.length) await truncate(path, good);
  return { size: good, ...(lastSeq !== undefined ? { lastSeq } : {}), cut: buf.length - good };
}

/** The sequence number of a segment's last record, or undefined when it has none. */
export async function lastSeqOf(path: string): Promise<number | undefined> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const len = Math.min(size, MAX_RECORD_BYTES);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    const lines = buf.toString('utf8').split('\n').filter(Boolean);
    return lines.length ? decodeRecord(lines[lines.length - 1])?.seq : undefined;
  } finally {
    await fh.close();
  }
}

/**
 * Reads whole records from `from` on, across segments, until about `maxBytes` were read (at least one
 * record when there is any). A damaged line is returned without an entry so the caller can skip it.
 */
export async function readRecords(dir: string, segs: Segment[], from: Pos, maxBytes: number): Promise<ReadRecord[]> {
  const out: ReadRecord[] = [];
  let total = 0;
  let pos = from;
  for (const seg of segs) {
    if (seg.index < pos.seg) continue;
    const off = seg.index === pos.seg ? pos.off : 0;
    if (off >= seg.size) continue;
    const len = Math.min(seg.size - off, Math.max(maxBytes - total, 0) + MAX_RECORD_BYTES);
    const buf = await readAt(join(dir, segmentName(seg.index)), off, len, { missing: 'empty' });
    for (let start = 0; start < buf.length;) {
      const nl = buf.indexOf(10, start);
      if (nl < 0) break;
      const entry = decodeRecord(buf.toString('utf8', start, nl));
      const bytes = nl + 1 - start;
      pos = { seg: seg.index, off: off + nl + 1 };
      out.push({ ...(entry ? { entry } : {}), bytes, end: pos });
      total += bytes;
      start = nl + 1;
      if (total >= maxBytes) return out;
    }
    if (off + buf.length < seg.size) return out;
  }
  return out;
}
