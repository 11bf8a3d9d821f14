/**
 * Each node's log cursor: the stream of its log shipper and the last `seq` stored from it, so that a batch
 * the agent sends again (its reply was lost) is stored once, also across a restart of the control plane.
 *
 * Kept in memory and appended to `<node dir>/cursor.jsonl`, one `{"stream":…,"seq":…}` line per stored POST,
 * after the POST's lines and before its reply, with the same kept-open plain writes (append-files.ts): no
 * temporary file, rename or fsync per POST. Read once per node: its last complete line that parses wins, so a
 * torn last line (a power loss mid-write) falls back to the line before it — an older cursor, which can store
 * a re-sent batch twice but never skips a line. When the file passes `maxBytes` it is replaced, atomically
 * (api/meta/atomic-file.ts), by its last line. `cursor.json`, the single-object file of earlier versions, is
 * read when a node has no `cursor.jsonl` yet.
 *
 * The read is synchronous, as the appends are (append-files.ts says why): a file of at most `maxBytes` from the
 * page cache. Through node:fs/promises it was four hand-offs to the libuv pool and back (open, fstat, read,
 * close): after a restart with 5,000 agents shipping, each node's first POST read its cursor so, and that took
 * 2.4 s of the control plane's event loop during the herd (bench/herd-probe.ts, 39 CPU-seconds in all).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../meta/atomic-file.ts';
import { isMissing } from '../../meta/errno.ts';
import type { AppendFiles } from './append-files.ts';

/** The last stored `seq` of a node's stream. */
export interface LogCursor {
  stream: string;
  seq: number;
}

/** The cursor file in a node's directory. */
export const CURSOR_FILE = 'cursor.jsonl';

/** Options of `LogCursors`. */
export interface LogCursorsOptions {
  files: AppendFiles;
  /** Size past which a cursor file is compacted to its last line. Default 64 KiB (about 1,800 POSTs). */
  maxBytes?: number;
}

/** The cursors of every node, by the node's directory (see the module comment). */
export class LogCursors {
  readonly #files: AppendFiles;
  readonly #maxBytes: number;
  readonly #cursors = new Map<string, LogCursor | undefined>();

  constructor(opts: LogCursorsOptions) {
    this.#files = opts.files;
    this.#maxBytes = opts.maxBytes ?? 64 * 1024;
  }

  /** The cursor kept in `nodeDir` (undefined when there is none). */
  get(nodeDir: string): LogCursor | undefined {
    if (this.#cursors.has(nodeDir)) return this.#cursors.get(nodeDir);
    const cursor = lastCursor(text(join(nodeDir, CURSOR_FILE))) ?? lastCursor(text(join(nodeDir, 'cursor.json')));
    this.#cursors.set(nodeDir, cursor);
    return cursor;
  }

  /** Records `cursor` for `nodeDir`: in memory, and appended to its file (compacted when large). */
  async set(nodeDir: string, cursor: LogCursor): Promise<void> {
    const path = join(nodeDir, CURSOR_FILE);
    const line = JSON.stringify({ stream: cursor.stream, seq: cursor.seq }) + '\n';
    const size = this.#files.append(path, Buffer.from(line, 'utf8'));
    this.#cursors.set(nodeDir, cursor);
    if (size <= this.#maxBytes) return;
    this.#files.forget(path);
    await writeFileAtomic(path, line, { mode: 0o600 });
  }
}

function text(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if (isMissing(e)) return '';
    throw e;
  }
}

/** The last line of `text` that is a complete (newline-ended), valid cursor. */
export function lastCursor(text: string): LogCursor | undefined {
  const lines = text.split('\n');
  lines.pop(); // '' after the last newline, or a line cut short
  for (let i = lines.length - 1; i >= 0; i--) {
    const c = parseCursor(lines[i]);
    if (c) return c;
  }
  return undefined;
}

function parseCursor(line: string): LogCursor | undefined {
  if (!line.trim()) return undefined;
  try {
    const c = JSON.parse(line) as { stream?: unknown; seq?: unknown };
    return typeof c.stream === 'string' && typeof c.seq === 'number' ? { stream: c.stream, seq: c.seq } : undefined;
  } catch {
    return undefined;
  }
}
