/**
 * How busy this process's event loop is, for the code that gives way to the foreground (a compaction's pacer:
 * api/store/idle-pacer.ts) and the code that batches the loop's turns (api/server/http/loop-batching.ts). Node's
 * `performance.eventLoopUtilization` counts the time the thread is held on purpose (Atomics.wait, while batching)
 * as busy; here it is kept apart, so that a held loop does not look busy to either. And work that waits for the next
 * turns to go on (a journal commit waiting for the disk: `awaitingTurns`) says so here, so that the loop is not held
 * while it waits: a chain of such steps (a controller writing node after node) would otherwise wait a hold each.
 */
import { performance } from 'node:perf_hooks';

/** The event loop's time so far, in ms: busy and idle as Node counts them, and how much of the busy time was held. */
export interface LoopTime {
  active: number;
  idle: number;
  held: number;
}

let heldMs = 0;
let awaiting = 0;
const word = new Int32Array(new SharedArrayBuffer(4));

/** The loop's time now (see LoopTime). */
export function loopTime(): LoopTime {
  const { active, idle } = performance.eventLoopUtilization();
  return { active, idle, held: heldMs };
}

/** The share of the time between two readings the loop was busy with work (held time not counted); 0 when none passed. */
export function busyShare(before: LoopTime, after: LoopTime): number {
  const wall = after.active + after.idle - before.active - before.idle;
  if (wall <= 0) return 0;
  return Math.max(0, after.active - before.active - (after.held - before.held)) / wall;
}

/** Holds the thread for `ms` (nothing runs; what arrives meanwhile waits in the kernel); returns how long it did. */
export function holdThread(ms: number): number {
  const t0 = performance.now();
  Atomics.wait(word, 0, 0, ms);
  const took = performance.now() - t0;
  heldMs += took;
  return took;
}

/** Marks work in flight that the loop's next turns carry on (see the module comment); call the result once it is done. */
export function awaitingTurns(): () => void {
  awaiting++;
  let done = false;
  return () => {
    if (!done) awaiting--;
    done = true;
  };
}

/** How many pieces of work marked by `awaitingTurns` are in flight. */
export function workAwaitingTurns(): number {
  return awaiting;
}
