/**
 * The log buffer's small state file (`state.json`, replaced atomically): the buffer's stream id, where
 * its undelivered records begin, the highest sequence number delivered or dropped, and the lines it had
 * to drop — in total (for metrics) and per service not yet reported to the control plane.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../api/meta/atomic-file.ts';
import { errnoCode } from '../drivers/fs-util.ts';
import type { Pos } from './buffer-segments.ts';
import type { DropCount } from './log-entry.ts';

/** What `state.json` holds. */
export interface BufferState {
  /** Identifies this buffer's sequence numbers (a new buffer starts a new stream at 1). */
  stream: string;
  /** The first record not yet delivered or dropped. */
  head: Pos;
  /** The highest sequence number delivered or dropped (so numbering goes on after an empty buffer). */
  seq: number;
  /** Everything dropped since the buffer was created. */
  dropped: DropCount;
  /** Drops per service that the control plane has not been told about yet. */
  unreported: Record<string, DropCount>;
}

/** A new buffer's state. */
export function freshState(firstSegment: number): BufferState {
  return {
    stream: randomBytes(8).toString('hex'),
    head: { seg: firstSegment, off: 0 },
    seq: 0,
    dropped: { lines: 0, bytes: 0 },
    unreported: {},
  };
}

/** The path of the state file in a buffer directory. */
export function statePath(dir: string): string {
  return join(dir, 'state.json');
}

/** Reads the state file: undefined when there is none; throws a readable error when it is damaged. */
export async function loadState(dir: string): Promise<BufferState | undefined> {
  let text: string;
  try {
    text = await readFile(statePath(dir), 'utf8');
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return undefined;
    throw e;
  }
  const s = JSON.parse(text) as Partial<BufferState>;
  const ok =
    typeof s.stream === 'string' &&
    typeof s.head?.seg === 'number' &&
    typeof s.head.off === 'number' &&
    typeof s.seq === 'number' &&
    typeof s.dropped?.lines === 'number' &&
    typeof s.unreported === 'object';
  if (!ok) throw new Error(`the log buffer state ${statePath(dir)} is damaged`);
  return s as BufferState;
}

/** Replaces the state file (durable on resolve). */
export async function saveState(dir: string, state: BufferState): Promise<void> {
  await writeFileAtomic(statePath(dir), JSON.stringify(state) + '\n', { mode: 0o600 });
}

/** Adds a drop of one line of `service` to the counts. */
export function countDrop(state: BufferState, service: string, bytes: number): void {
  state.dropped.lines += 1;
  state.dropped.bytes += bytes;
  const u = (state.unreported[service] ??= { lines: 0, bytes: 0 });
  u.lines += 1;
  u.bytes += bytes;
}
