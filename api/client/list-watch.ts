/**
 * The one list-then-watch loop of every program: the informer, the agent's watch of its Declaration and
 * `meshctl get -w` all run on it.
 *
 * It lists (remembering the resourceVersion), then watches from there with bookmarks, re-watching from the
 * last resourceVersion seen whenever a stream ends. A 410 (expired resourceVersion) relists at once (410s
 * in a row back off); a handler that throws makes it relist too, so nothing is skipped. Any other failure
 * (server unreachable, 5xx) goes to `onFailure` and is retried with exponential backoff on the injectable
 * clock, cut short by `wake()` or `stop()`. A stream silent for `idleTimeoutMs` (no event, no bookmark) is
 * presumed dead and reopened.
 */
import { ApiError } from '../meta/api-error.ts';
import { Backoff, realClock, sleep, type Clock, type Sleep, type TimerHandle } from '../meta/clock.ts';
import { silentLogger, type LogFields, type Logger } from '../meta/logger.ts';
import type { KubeObject, ObjectEvent, WatchEvent } from '../meta/types.ts';
import type { Client, WatchStream } from './types.ts';

/** Options of `startListWatch`. */
export interface ListWatchOptions<T extends KubeObject = KubeObject> {
  client: Client;
  /** The kind to follow, by plural (e.g. `nodes`). */
  plural: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Watches without the events of status-only changes (ClientWatchOptions.omitStatusUpdates); lists are whole. */
  omitStatusUpdates?: boolean;
  clock?: Clock;
  /** Where it says what it did (listed, relisting, failed). Default: silent. */
  logger?: Logger;
  /** Fields added to each of its log lines (e.g. `{ node }`). */
  logFields?: LogFields;
  /**
   * Retry delays after failures: `baseMs * 2^n` up to `maxMs`, each shortened by a random part of at most `jitter`
   * (0 to 1, api/meta/clock.ts Backoff). Default 250 ms, 30 s, no jitter.
   */
  backoff?: { baseMs?: number; maxMs?: number; jitter?: number; random?: () => number };
  /** When > 0, a stream without any event for this long is closed and reopened. */
  idleTimeoutMs?: number;
  /** Starts with a watch from now instead of a list (`get -w --watch-only`); a 410 still relists. */
  watchOnly?: boolean;
  /** Receives each whole list (the first, and after a 410 or a failed handler). Throwing makes it relist. */
  onList(items: T[], resourceVersion: string): void | Promise<void>;
  /** Receives each ADDED, MODIFIED and DELETED event in order. Throwing makes it relist. */
  onEvent(event: ObjectEvent<T>): void | Promise<void>;
  /** Called each time the server answered a list or opened a watch. */
  onContact?(): void;
  /** Called with every failure except a 410, before the backoff; throw to end the loop. Default: logs it. */
  onFailure?(e: unknown, retryInMs: number): void;
}

/** A running list+watch loop. */
export interface ListWatch {
  /** The resourceVersion the next watch would start from. */
  resourceVersion(): string;
  /** Ends a backoff pause now and forgets the failures (the server is known to be back). */
  wake(): void;
  /** Stops the loop and closes the watch; resolves once the loop has ended. */
  stop(): Promise<void>;
  /** Resolves when the loop ended by `stop()`; rejects with what `onFailure` threw. */
  readonly done: Promise<void>;
}

/** True when `e` means the resourceVersion is too old (HTTP 410 Gone / Expired). */
export function isGone(e: unknown): boolean {
  return e instanceof ApiError && e.code === 410;
}

/** The ApiError a watch ERROR event carries (its object is a `Status`). */
export function watchEventError(ev: Extract<WatchEvent, { type: 'ERROR' }>): ApiError {
  return ApiError.fromStatus(ev.object, ev.object.code ?? 500);
}

/** Starts the loop in the background. */
export function startListWatch<T extends KubeObject = KubeObject>(opts: ListWatchOptions<T>): ListWatch {
  const clock = opts.clock ?? realClock;
  const logger = opts.logger ?? silentLogger;
  const fields = { plural: opts.plural, ...opts.logFields };
  const selectors = { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector };
  const b = opts.backoff;
  const backoff = new Backoff({
    baseMs: b?.baseMs ?? 250,
    maxMs: b?.maxMs ?? 30_000,
    jitter: b?.jitter,
    random: b?.random,
  });
  const onFailure =
    opts.onFailure ?? ((error, retryInMs) => logger.error('List or watch failed', { ...fields, error, retryInMs }));
  let rv = '';
  let needList = !opts.watchOnly;
  let goneInARow = 0;
  let stopped = false;
  let stream: WatchStream | undefined;
  let nap: Sleep | undefined;

  /** Runs a handler; if it throws, the next round relists. */
  async function deliver(fn: () => void | Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      needList = true;
      throw e;
    }
  }

  async function relist(): Promise<void> {
    const list = await opts.client.list(opts.plural, selectors);
    opts.onContact?.();
    if (stopped) return;
    await deliver(() => opts.onList(list.items as T[], list.metadata.resourceVersion));
    rv = list.metadata.resourceVersion;
    needList = false;
    logger.info('Listed objects', { ...fields, count: list.items.length, resourceVersion: rv });
  }

  async function handle(ev: WatchEvent<T>): Promise<void> {
    if (ev.type === 'ERROR') throw watchEventError(ev);
    if (ev.type !== 'BOOKMARK') await deliver(() => opts.onEvent(ev));
    if (ev.object.metadata?.resourceVersion) rv = ev.object.metadata.resourceVersion;
  }

  /** Watches from `rv` until the stream ends; backs off if it ended without events. */
  async function watchOnce(): Promise<void> {
    const s = await opts.client.watch(opts.plural, {
      ...selectors,
      ...(rv ? { resourceVersion: rv } : {}),
      allowWatchBookmarks: true,
      ...(opts.omitStatusUpdates ? { omitStatusUpdates: true } : {}),
    });
    stream = s;
    opts.onContact?.();
    if (stopped) s.close();
    const idleMs = opts.idleTimeoutMs ?? 0;
    let idle: TimerHandle | undefined;
    const arm = (): void => {
      if (idle !== undefined) clock.clearTimeout(idle);
      if (idleMs > 0) idle = clock.setTimeout(() => s.close(), idleMs);
    };
    let received = false;
    try {
      arm();
      for await (const ev of s.events) {
        if (stopped) break;
        arm();
        await handle(ev as WatchEvent<T>);
        backoff.reset();
        goneInARow = 0;
        received = true;
      }
    } finally {
      if (idle !== undefined) clock.clearTimeout(idle);
      s.close();
      stream = undefined;
    }
    if (received || stopped) return;
    const retryInMs = backoff.next();
    logger.info('Watch ended without events', { ...fields, retryInMs });
    await pause(retryInMs);
  }

  async function failed(e: unknown): Promise<void> {
    if (stopped) return;
    if (isGone(e)) {
      logger.info('Watch expired, relisting', { ...fields, resourceVersion: rv });
      needList = true;
      // A 410 relists at once; 410s in a row without any event in between back off.
      if (goneInARow++ > 0) await pause(backoff.next());
      return;
    }
    const retryInMs = backoff.next();
    onFailure(e, retryInMs);
    await pause(retryInMs);
  }

  /** Sleeps `ms` on the clock (cut short by wake and stop). */
  async function pause(ms: number): Promise<void> {
    if (stopped) return;
    nap = sleep(clock, ms);
    await nap.promise;
    nap = undefined;
  }

  async function run(): Promise<void> {
    while (!stopped) {
      try {
        if (needList) await relist();
        if (!stopped) await watchOnce();
      } catch (e) {
        await failed(e);
      }
    }
  }

  const done = run();
  return {
    resourceVersion: () => rv,
    wake() {
      backoff.reset();
      nap?.cancel();
    },
    async stop() {
      stopped = true;
      stream?.close();
      nap?.cancel();
      await done.catch(() => {});
    },
    done,
  };
}
