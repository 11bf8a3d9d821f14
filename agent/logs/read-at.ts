/**
 * Reads up to `len` bytes of a file at offset `off` (fewer at the end of the file): the one positioned
 * read of the log tailer and the log buffer.
 */
import { open } from 'node:fs/promises';
import { errnoCode } from '../../api/meta/errno.ts';

/** The bytes read; a missing file is an empty read with `missing: 'empty'`, an error otherwise. */
export async function readAt(
  path: string,
  off: number,
  len: number,
  opts: { missing?: 'empty' | 'throw' } = {},
): Promise<Buffer> {
  if (len <= 0) return Buffer.alloc(0);
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    if (opts.missing === 'empty' && errnoCode(e) === 'ENOENT') return Buffer.alloc(0);
    throw e;
  }
  try {
    const buf = Buffer.alloc(len);
    const { bytesRead } = await fh.read(buf, 0, len, off);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
