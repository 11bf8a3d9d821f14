/**
 * One read step of the tailer for one service log: from the kept position, notice a copy-truncate
 * rotation, read on in `<file>.1` or the file itself, and return the bytes consumed (whole lines, or a
 * piece of an over-long line) with the position after them.
 */
import { open } from 'node:fs/promises';
import { readAt } from './read-at.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** Where the tailer is in a service log: which file, the byte offset, and the bytes just before it (base64). */
export interface FilePos {
  file: 'current' | 'rotated';
  offset: number;
  check: string;
}

/** How many bytes before the position are kept to recognise the file. */
const CHECK_BYTES = 32;

const START: FilePos = { file: 'current', offset: 0, check: '' };

/** What one read step consumed. */
export interface Chunk {
  data: Buffer;
  pos: FilePos;
}

/** Reads the next chunk of one service log (see the module comment). */
export async function readChunk(a: {
  path: string;
  pos?: FilePos;
  maxLine: number;
  maxRead: number;
  onLost(why: string): void;
}): Promise<Chunk> {
  let pos = a.pos ?? START;
  const rotated = `${a.path}.1`;
  if (pos.file === 'current') {
    const cur = await probe(a.path, pos);
    if (!cur) return { data: Buffer.alloc(0), pos };
    if (cur.matches)
      return consume(
        await readAt(a.path, pos.offset, Math.min(a.maxRead, cur.size - pos.offset)),
        pos,
        a.maxLine,
        false,
      );
    pos = { ...pos, file: 'rotated' };
  }
  const rot = await probe(rotated, pos);
  if (!rot?.matches) {
    a.onLost(`${a.path} was rotated but ${rotated} no longer holds the unread part after byte ${pos.offset}`);
    return readChunk({ ...a, pos: START });
  }
  const raw = await readAt(rotated, pos.offset, Math.min(a.maxRead, rot.size - pos.offset));
  return consume(raw, pos, a.maxLine, pos.offset + raw.length >= rot.size);
}

/** Splits consumed bytes into lines (a trailing piece without newline is a line too); cuts long lines. */
export function splitLines(data: Buffer, maxLine: number): string[] {
  const out: string[] = [];
  for (let start = 0; start < data.length;) {
    const nl = data.indexOf(10, start);
    const end = nl < 0 ? data.length : nl;
    let p = start;
    do {
      out.push(data.toString('utf8', p, Math.min(end, p + maxLine)).replace(/\r$/, ''));
      p += maxLine;
    } while (p < end);
    start = end + 1;
  }
  return out;
}

/** Takes whole lines from `raw` (all of it when `final`; a piece when one line fills `maxLine`). */
function consume(raw: Buffer, pos: FilePos, maxLine: number, final: boolean): Chunk {
  const nl = raw.lastIndexOf(10);
  const take = final ? raw.length : nl >= 0 ? nl + 1 : raw.length - (raw.length % maxLine);
  const data = raw.subarray(0, take);
  if (final) return { data, pos: START };
  if (take === 0) return { data, pos };
  const check = Buffer.concat([Buffer.from(pos.check, 'base64'), data]);
  return {
    data,
    pos: {
      file: pos.file,
      offset: pos.offset + take,
      check: check.subarray(Math.max(0, check.length - CHECK_BYTES)).toString('base64'),
    },
  };
}

/** The file's size and whether it still holds the checked bytes before the position; undefined when it is gone. */
async function probe(path: string, pos: FilePos): Promise<{ size: number; matches: boolean } | undefined> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const { size } = await fh.stat();
    if (size < pos.offset) return { size, matches: false };
    const check = Buffer.from(pos.check, 'base64');
    if (check.length === 0) return { size, matches: true };
    const buf = Buffer.alloc(check.length);
    await fh.read(buf, 0, check.length, pos.offset - check.length);
    return { size, matches: buf.equals(check) };
  } finally {
    await fh.close();
  }
}
