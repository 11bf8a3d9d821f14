/**
 * The probes' count of store writes: the control plane's journal files (`<data dir>/store/journal-*`) at one moment,
 * and the lines (one per write) appended since. A mark keeps each segment it saw open, so the lines appended to a
 * segment that a compaction then deleted (api/store/journal-adapter.ts drops the segments its snapshot covers) are
 * still counted: without that, a heartbeat window at N = 5,000 that a compaction fell in counted 803 Node writes of
 * some 5,000.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** The journal's segments at one moment: each one's size then, and a descriptor that keeps it readable. */
export interface JournalMark {
  dir: string;
  segments: Map<string, { size: number; fd: number }>;
}

const segmentsIn = (dir: string): string[] => readdirSync(dir).filter((f) => f.startsWith('journal-'));

/** Marks the journal of a control plane's data directory now (read it, and close it, with journalLinesSince). */
export function journalMark(dataDir: string): JournalMark {
  const dir = join(dataDir, 'store');
  const segments = new Map<string, { size: number; fd: number }>();
  for (const f of segmentsIn(dir)) {
    const fd = openSync(join(dir, f), 'r');
    segments.set(f, { size: fstatSync(fd).size, fd });
  }
  return { dir, segments };
}

function linesOf(fd: number, from: number): string[] {
  const buf = Buffer.alloc(Math.max(0, fstatSync(fd).size - from));
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, from + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got).toString().split('\n').filter(Boolean);
}

/**
 * The journal lines written since `mark`: in the segments it saw (deleted since or not), and in the segments made
 * after it. Closes the mark's descriptors. A segment made and deleted between the two is not seen (two compactions).
 */
export function journalLinesSince(mark: JournalMark): string[] {
  const out: string[] = [];
  try {
    for (const { size, fd } of mark.segments.values()) out.push(...linesOf(fd, size));
    for (const f of segmentsIn(mark.dir)) {
      if (mark.segments.has(f)) continue;
      const fd = openSync(join(mark.dir, f), 'r');
      try {
        out.push(...linesOf(fd, 0));
      } finally {
        closeSync(fd);
      }
    }
  } finally {
    for (const { fd } of mark.segments.values()) closeSync(fd);
  }
  return out;
}

/** A journal line's resource (`nodes`, `declarations`, …). */
export function resourceOf(line: string): string {
  return (JSON.parse(line) as { plural?: string }).plural ?? '?';
}

/** The journal lines written since `mark`, counted by resource (closes the mark, as journalLinesSince). */
export function writesSince(mark: JournalMark): Map<string, number> {
  const by = new Map<string, number>();
  for (const line of journalLinesSince(mark)) by.set(resourceOf(line), (by.get(resourceOf(line)) ?? 0) + 1);
  return by;
}
