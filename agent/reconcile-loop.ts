/**
 * When the agent reconciles: at start (a cold start from its own store), after each new generation,
 * and every `intervalMs` after the previous reconcile ended (drift correction). Reconciles never
 * overlap: triggers while one runs collapse into one more run after it. Each run reads the declaration
 * from the agent's store — never from the network — so it works the same with the control plane down.
 * Nothing is reconciled before a declaration has been stored (nothing declared is not "remove all").
 */
import { performance } from 'node:perf_hooks';
import { realClock, type Clock, type TimerHandle } from '../api/meta/clock.ts';
import type { Engine, ReconcileResult } from './engine/reconciler.ts';
import type { Logger } from './engine/types.ts';
import type { Declaration, DeclaredResource } from '../api/v1alpha1/generated/declaration.ts';

/** One finished run: its declaration and either the engine's result or the error it threw. */
export interface RunOutcome {
  decl: Declaration;
  result?: ReconcileResult;
  error?: Error;
  durationMs: number;
}

/** Options of `createReconcileLoop`. */
export interface ReconcileLoopOptions {
  engine: Engine;
  /** The stored declaration (read at the start of each run). */
  declaration(): Declaration | undefined;
  /** Turns the declaration into the engine's resources (certificate content resolved). */
  resources(decl: Declaration): DeclaredResource[];
  intervalMs: number;
  logger: Logger;
  node: string;
  onRun(outcome: RunOutcome): void | Promise<void>;
  /** The interval timer's clock. Default: the real clock. */
  clock?: Clock;
}

/** The reconcile scheduler. */
export interface ReconcileLoop {
  /** Asks for a reconcile; resolves once a run that started after this call has finished. */
  trigger(reason: string): Promise<void>;
  /** Starts the interval timer. */
  start(): void;
  /** Stops the timer and waits for a running reconcile to finish. */
  stop(): Promise<void>;
}

/** Creates the reconcile scheduler. */
export function createReconcileLoop(opts: ReconcileLoopOptions): ReconcileLoop {
  let running: Promise<void> | undefined;
  let pending: { reason: string; waiters: Array<() => void> } | undefined;
  const clock = opts.clock ?? realClock;
  let timer: TimerHandle | undefined;
  let started = false;
  let stopped = false;

  const schedule = (): void => {
    if (!started || stopped) return;
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = clock.setTimeout(() => {
      timer = undefined;
      void trigger('interval');
    }, opts.intervalMs);
  };

  async function runOnce(reason: string): Promise<void> {
    const decl = opts.declaration();
    if (!decl) return;
    const t0 = performance.now();
    try {
      const result = await opts.engine.reconcile(opts.resources(decl));
      await opts.onRun({ decl, result, durationMs: performance.now() - t0 });
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      opts.logger.error('Failed to reconcile Declaration', {
        node: opts.node,
        generation: decl.spec.generation,
        reason,
        error: error.message,
      });
      await Promise.resolve(opts.onRun({ decl, error, durationMs: performance.now() - t0 })).catch(() => {});
    }
  }

  async function drain(): Promise<void> {
    while (pending && !stopped) {
      const { reason, waiters } = pending;
      pending = undefined;
      await runOnce(reason);
      for (const w of waiters) w();
    }
    running = undefined;
    for (const w of pending?.waiters ?? []) w();
    pending = undefined;
    schedule();
  }

  function trigger(reason: string): Promise<void> {
    if (stopped) return Promise.resolve();
    const done = new Promise<void>((resolve) => {
      pending ??= { reason, waiters: [] };
      pending.waiters.push(resolve);
    });
    running ??= drain();
    return done;
  }

  return {
    trigger,
    start() {
      started = true;
      if (!running) schedule();
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      await running;
    },
  };
}
