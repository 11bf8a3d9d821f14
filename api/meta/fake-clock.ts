/**
 * A manual clock for tests: time moves only when `advance(ms)` is called, which fires the due timers in order.
 * Production code never imports this file.
 */
import type { Clock, TimerHandle } from './clock.ts';

interface Timer {
  id: number;
  due: number;
  fn: () => void;
}

/** A test clock whose timers fire only from `advance`, in order of due time then creation. */
export class FakeClock implements Clock {
  private time: number;
  private seq = 0;
  private readonly timers = new Map<number, Timer>();

  constructor(opts: { start?: number } = {}) {
    this.time = opts.start ?? 1_000_000;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { id, due: this.time + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Moves time forward by `ms`, firing every timer that falls due (including ones scheduled meanwhile). */
  advance(ms: number): void {
    const end = this.time + ms;
    for (let t = this.nextDue(end); t; t = this.nextDue(end)) {
      this.timers.delete(t.id);
      this.time = t.due;
      t.fn();
    }
    this.time = end;
  }

  /** The number of timers not yet fired. */
  pending(): number {
    return this.timers.size;
  }

  private nextDue(end: number): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.timers.values()) {
      if (t.due > end) continue;
      if (!best || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    }
    return best;
  }
}

/** Lets pending promise callbacks and I/O callbacks run (one macrotask turn), for tests that drive a FakeClock. */
export async function settle(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
