/**
 * Reads stored service logs: the whole log (the rotated part `<file>.1`, then `<file>`) or only its last
 * N lines, read backwards in chunks so that `tailLines=10` of an 8 MiB file reads a few KiB.
 */
import { open, readFile } from 'node:fs/promises';
import { isMissing } from '../../meta/errno.ts';

const CHUNK = 64 * 1024;

/** The whole text of a file ('' when it does not exist). */
async function wholeText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if (isMissing(e)) return '';
    throw e;
  }
}

/** The last `n` lines of a file (each with its newline), oldest first; fewer when the file has fewer. */
export async function lastLines(path: string, n: number): Promise<string[]> {
  if (n <= 0) return [];
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    if (isMissing(e)) return [];
    throw e;
  }
  try {
    const { size } = await fh.stat();
    const parts: Buffer[] = [];
    let pos = size;
    let newlines = 0;
    while (pos > 0 && newlines <= n) {
      const len = Math.min(CHUNK, pos);
      pos -= len;
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, pos);
      parts.unshift(buf);
      for (const b of buf) if (b === 10) newlines++;
    }
    const lines = Buffer.concat(parts)
      .toString('utf8')
      .split(/(?<=\n)/)
      .filter(Boolean);
    if (pos > 0) lines.shift();
    return lines.slice(-n);
  } finally {
    await fh.close();
  }
}

/** A stored log's text: all of it, or its last `tailLines` lines (reaching into the rotated part when needed). */
export async function readLog(path: string, tailLines?: number): Promise<string> {
  if (tailLines === undefined) return (await wholeText(`${path}.1`)) + (await wholeText(path));
  const recent = await lastLines(path, tailLines);
  const older = recent.length < tailLines ? await lastLines(`${path}.1`, tailLines - recent.length) : [];
  return [...older, ...recent].join('');
}
