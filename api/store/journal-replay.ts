/**
 * Rebuilds the state from the journal segments on open. Records at or below the snapshot's resourceVersion
 * are skipped. A torn last line of the newest segment (no trailing newline, or unparseable) was never
 * acknowledged: it is cut off the file and logged. Damage anywhere else fails the open with an Error naming
 * the file and line, so a broken store is never mistaken for an empty one. It also reports whether the journal
 * ends with a clean close's mark (nothing was issued after it, so no crash can have lost a served write).
 */
import { readFile } from 'node:fs/promises';
import { listSegments } from './journal.ts';
import { applyRecord, parseJournalLine, type JournalRecord, type StoreData } from './store-data.ts';
import type { StoreFs } from './store-fs.ts';
import type { StoreLogger } from './store-log.ts';

/** What replay found: the newest segment (to append to) and the total journal size. */
export interface ReplayResult {
  newest?: { seq: number; size: number };
  segments: number;
  bytes: number;
  /** The newest segment's last record is a `closed` mark: the last process closed the store cleanly. */
  closedCleanly: boolean;
}

function corrupt(file: string, line: number, why: string): Error {
  return new Error(
    `corrupt store journal ${file}:${line}: ${why}; refusing to open the store ` +
      '(restore it from a backup, or repair the file by hand)',
  );
}

interface Parsed {
  records: JournalRecord[][];
  goodBytes: number;
  torn?: string;
}

/** Parses one segment; `newest` allows (and reports) a torn last line instead of failing. */
function parseSegment(file: string, buf: Buffer, newest: boolean): Parsed {
  let goodBytes = buf.lastIndexOf(0x0a) + 1;
  let torn = goodBytes < buf.length ? `${buf.length - goodBytes} bytes without a trailing newline` : undefined;
  if (torn && !newest) throw corrupt(file, buf.subarray(0, goodBytes).toString().split('\n').length, torn);
  const lines = buf.subarray(0, goodBytes).toString('utf8').split('\n');
  lines.pop();
  const records: JournalRecord[][] = [];
  for (let i = 0; i < lines.length; i++) {
    try {
      records.push(parseJournalLine(lines[i]));
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (!newest || i !== lines.length - 1) throw corrupt(file, i + 1, why);
      goodBytes -= Buffer.byteLength(lines[i]) + 1;
      torn = `unparseable last line ${i + 1} (${why})${torn ? ` and ${torn}` : ''}`;
    }
  }
  return { records, goodBytes, torn };
}

/** Replays every journal segment into `data` (see the file comment); mutates `data.kinds` and `data.rv`. */
export async function replayJournal(
  dir: string,
  data: StoreData,
  snapshotRv: number,
  log: StoreLogger,
  fs: StoreFs,
): Promise<ReplayResult> {
  const segments = listSegments(dir);
  let bytes = 0;
  let newest: ReplayResult['newest'];
  let last: JournalRecord | undefined;
  for (let i = 0; i < segments.length; i++) {
    const { seq, file } = segments[i];
    const isNewest = i === segments.length - 1;
    const buf = await readFile(file);
    const parsed = parseSegment(file, buf, isNewest);
    if (parsed.torn) {
      await fs.truncate(file, parsed.goodBytes);
      log({ msg: 'Dropped torn journal tail', file, reason: parsed.torn, bytes: buf.length - parsed.goodBytes });
    }
    for (const group of parsed.records) {
      for (const rec of group) {
        last = rec;
        if (rec.rv <= snapshotRv) continue;
        applyRecord(data.kinds, rec);
        if (rec.rv > data.rv) data.rv = rec.rv;
      }
    }
    bytes += parsed.goodBytes;
    if (isNewest) newest = { seq, size: parsed.goodBytes };
    else last = undefined;
  }
  return { newest, segments: segments.length, bytes, closedCleanly: last?.op === 'closed' };
}
