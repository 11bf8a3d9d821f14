/**
 * A controller: informer events become keys on a work queue, and N workers hand each key to `reconcile`.
 *
 * The reconcile contract (controller-runtime's): the reconciler gets only a key, re-reads the world and
 * converges it. Returning normally forgets the key's backoff (and `requeueAfter` looks again later);
 * throwing retries the key with per-key exponential backoff; throwing a `TerminalError` stops retrying
 * (the reconciler should have recorded the failure in the object's status).
 *
 * A worker lets the event loop run between two keys (runWorker): a reconcile that writes nothing completes in
 * microtasks, so a queue of thousands of keys would otherwise be drained before any socket is read.
 *
 * A controller may yield to another (`yieldTo`, its queue): it reconciles no key while that queue is busy, for at most
 * `yieldMaxMs` of one busy spell, after which it runs alongside until the queue is next idle. Meanwhile its keys wait
 * in its queue, where repeated adds of a key collapse into one reconcile (a key a worker had already taken waits in
 * that worker). The Assignment controller yields to the Declaration controller
 * (controllers/assignment-controller.ts, addDeclarationAndAssignmentControllers): an all-nodes change writes every
 * node's Declaration first, and the Assignments' status, which reports what the nodes applied, follows.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { ApiError } from '../../api/meta/api-error.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import { realClock, sleep, type Clock, type Sleep } from '../../api/meta/clock.ts';
import type { Informer, InformerEventType } from '../../api/client/informer.ts';
import { createJsonLogger, type Logger } from '../../api/meta/logger.ts';
import { WorkQueue } from '../../api/client/work-queue.ts';

/** What a reconcile may ask for besides success: `requeueAfter` ms to look again. */
export interface Result {
  requeueAfter?: number;
}

/** Converges the object named by `key`; see the module comment for what returning and throwing mean. */
export interface Reconciler {
  reconcile(key: string): Promise<Result | void>;
}

/** An error that retrying cannot fix: the key is forgotten instead of retried. */
export class TerminalError extends Error {
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'TerminalError';
  }
}

/** An informer whose events enqueue keys: by default the object's name (every kind is cluster-scoped). */
export interface Source {
  informer: Informer;
  /** Maps a changed object (e.g. an Assignment) to the keys of primary objects to reconcile (e.g. its Node); `old` as the informer reports it. */
  keys?: (obj: KubeObject, type: InformerEventType, old?: KubeObject) => string[];
}

/** Options of createController. */
export interface ControllerOptions {
  /** The controller's name, for logs (e.g. `node`). */
  name: string;
  /** Where keys come from; the first is usually the primary kind's informer. */
  sources?: Source[];
  reconciler: Reconciler;
  /** How many keys are reconciled at once (never the same key twice). Default 1. */
  workers?: number;
  /** Default: a new WorkQueue on `clock`. */
  queue?: WorkQueue;
  clock?: Clock;
  logger?: Logger;
  /** Another controller's queue this one waits for (see the module comment). Default: none. */
  yieldTo?: WorkQueue;
  /** How long one busy spell of `yieldTo` holds this controller back at most. Default YIELD_MAX_MS. */
  yieldMaxMs?: number;
}

/**
 * The default of ControllerOptions.yieldMaxMs: longer than writing the Declarations of an all-nodes change at 5,000
 * nodes takes (bench/RESULTS.md §9), and the longest a steady stream of Declaration writes holds the other back.
 */
export const YIELD_MAX_MS = 15_000;

/** A controller: its queue, its informers, and workers started by `start()`. */
export interface Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  /** The informers of its sources (the manager starts and syncs them before `start()`). */
  readonly informers: Informer[];
  /** Starts the workers; idempotent. */
  start(): void;
  /** Shuts the queue down and resolves once every worker has finished its current key. */
  stop(): Promise<void>;
}

/** Creates a controller; its event handlers are registered at once, its workers run from `start()`. */
export function createController(opts: ControllerOptions): Controller {
  const logger = opts.logger ?? createJsonLogger();
  const queue = opts.queue ?? new WorkQueue({ clock: opts.clock });
  const sources = opts.sources ?? [];
  for (const s of sources) {
    s.informer.addEventHandler((type, obj, old) => {
      const keys = s.keys ? s.keys(obj, type, old) : [obj.metadata.name as string];
      for (const k of keys) if (k) queue.add(k);
    });
  }
  let workers: Promise<void>[] | undefined;
  let stopping = false;
  const gate = opts.yieldTo
    ? new YieldGate(opts.yieldTo, opts.yieldMaxMs ?? YIELD_MAX_MS, opts.clock ?? realClock)
    : undefined;
  const ctx: WorkerContext = {
    name: opts.name,
    queue,
    reconciler: opts.reconciler,
    logger,
    stopping: () => stopping,
    gate,
  };
  return {
    name: opts.name,
    queue,
    informers: sources.map((s) => s.informer),
    start() {
      if (workers || stopping) return;
      workers = Array.from({ length: Math.max(1, opts.workers ?? 1) }, () => runWorker(ctx));
      logger.info('Started controller', { controller: opts.name, workers: workers.length });
    },
    async stop() {
      stopping = true;
      queue.shutDown();
      gate?.release();
      await Promise.all(workers ?? []);
    },
  };
}

interface WorkerContext {
  name: string;
  queue: WorkQueue;
  reconciler: Reconciler;
  logger: Logger;
  stopping: () => boolean;
  gate: YieldGate | undefined;
}

/**
 * Holds a controller's workers while another queue is busy (ControllerOptions.yieldTo): `wait()` resolves once that
 * queue is idle, or once the spell has lasted `maxMs` — then it resolves at once until the queue is next idle.
 */
class YieldGate {
  #givenUp = false;
  #released = false;
  /** The wait of the current busy spell: cut short when the other queue is idle, else it ends after `maxMs`. */
  #waiting: Sleep | undefined;

  constructor(
    private readonly other: WorkQueue,
    private readonly maxMs: number,
    private readonly clock: Clock,
  ) {}

  wait(): Promise<void> {
    if (this.#released || !this.other.busy()) {
      this.#givenUp = false;
      return Promise.resolve();
    }
    if (this.#givenUp) return Promise.resolve();
    if (!this.#waiting) {
      const spell = sleep(this.clock, this.maxMs);
      let idle = false;
      void this.other.idle().then(() => {
        idle = true;
        spell.cancel();
      });
      // Registered before any worker awaits the spell, so the give-up is decided before they run on.
      void spell.promise.then(() => {
        if (this.#waiting === spell) this.#waiting = undefined;
        if (idle || this.#released) return;
        this.#givenUp = true;
        void this.other.idle().then(() => (this.#givenUp = false));
      });
      this.#waiting = spell;
    }
    return this.#waiting.promise;
  }

  /** Lets every waiting and later `wait()` through (the controller is stopping). */
  release(): void {
    this.#released = true;
    this.#waiting?.cancel();
  }
}

async function runWorker(ctx: WorkerContext): Promise<void> {
  for (let key = await ctx.queue.get(); key !== undefined; key = await ctx.queue.get()) {
    try {
      await ctx.gate?.wait();
      if (!ctx.stopping()) await reconcileOne(ctx, key);
    } finally {
      ctx.queue.done(key);
    }
    // The next key waits for a turn of the event loop: a reconcile that finds nothing to write never waits for I/O,
    // and a queue of such keys (every node's, when the control plane starts) ran as one chain of microtasks. A
    // control plane restarted under 5,000 agents (bench/herd-probe.ts) held its event loop for up to 3.4 s at a
    // time once its controllers started; with this turn, at most 0.9 s (monitorEventLoopDelay, one run each).
    await yieldToLoop();
  }
}

/** Runs one reconcile and turns its outcome into forget / addAfter / addRateLimited. */
async function reconcileOne(ctx: WorkerContext, key: string): Promise<void> {
  const { queue, logger } = ctx;
  try {
    const result = await ctx.reconciler.reconcile(key);
    queue.forget(key);
    if (result && result.requeueAfter !== undefined && result.requeueAfter > 0)
      queue.addAfter(key, result.requeueAfter);
  } catch (e) {
    if (e instanceof TerminalError) {
      queue.forget(key);
      logger.error('Reconcile failed terminally', { controller: ctx.name, key, error: e });
      return;
    }
    queue.addRateLimited(key);
    // A stale read (Conflict, AlreadyExists) is the ordinary optimistic-concurrency retry, not a failure; so is a
    // write that finds the key's own object deleted meanwhile (NotFound naming it): the retry sees it gone.
    const stale = e instanceof ApiError && e.code === 409;
    const deleted = e instanceof ApiError && e.reason === 'NotFound' && e.details?.name === key;
    const msg = stale ? 'Reconcile raced a write, will retry' : deleted ? 'Reconcile raced a delete, will retry' : '';
    (msg ? logger.info : logger.error).call(logger, msg || 'Reconcile failed, will retry', {
      controller: ctx.name,
      key,
      error: e,
      requeues: queue.numRequeues(key),
    });
  }
}
