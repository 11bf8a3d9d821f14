/**
 * The log buffer's small state file (`state.json`, replaced atomically): the buffer's stream id, where
 * its undelivered records begin, the highest sequence number delivered or dropped, and the lines it had
 * to drop — in total (for metrics) and per service not yet reported to the control plane.
 *
 * A line pushed out of the buffer while the batch holding it is being sent is not dropped yet: it is
 * held (`inFlight`) until the send's outcome is known — delivered when the batch is acknowledged, dropped
 * when the send failed, or when a restart forgot the outcome (so drops are never under-counted).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../api/meta/atomic-file.ts';
import type { Pos } from './buffer-segments.ts';
import type { DropCount } from './log-entry.ts';
import { errnoCode } from '../../api/meta/errno.ts';

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
  /** Lines pushed out while being sent, per service: dropped unless that send is acknowledged. */
  inFlight: Record<string, DropCount>;
}

/** A new buffer's state. */
export function freshState(firstSegment: number): BufferState {
  return {
    stream: randomBytes(8).toString('hex'),
    head: { seg: firstSegment, off: 0 },
    seq: 0,
    dropped: { lines: 0, bytes: 0 },
    unreported: {},
    inFlight: {},
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
  s.inFlight ??= {};
  return s as BufferState;
}

/** Replaces the state file (durable on resolve). */
export async function saveState(dir: string, state: BufferState): Promise<void> {
  await writeFileAtomic(statePath(dir), JSON.stringify(state) + '\n', { mode: 0o600 });
}

/** Adds a drop of `lines` lines of `service` to the counts. */
export function countDrop(state: BufferState, service: string, bytes: number, lines = 1): void {
  state.dropped.lines += lines;
  state.dropped.bytes += bytes;
  const u = (state.unreported[service] ??= { lines: 0, bytes: 0 });
  u.lines += lines;
  u.bytes += bytes;
}

/** Holds a line of `service` pushed out of the buffer while it is being sent (see the module comment). */
export function holdDrop(state: BufferState, service: string, bytes: number): void {
  const h = (state.inFlight[service] ??= { lines: 0, bytes: 0 });
  h.lines += 1;
  h.bytes += bytes;
}

/** Ends the hold: the lines were delivered (forgotten) or not (counted as dropped). True when any were held. */
export function settleHeld(state: BufferState, delivered: boolean): boolean {
  const held = Object.entries(state.inFlight);
  if (!delivered) for (const [service, h] of held) countDrop(state, service, h.bytes, h.lines);
  state.inFlight = {};
  return held.length > 0;
}
