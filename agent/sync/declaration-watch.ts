/**
 * The agent's watch of its own Declaration (`fieldSelector=metadata.name=<node>`): list once, then watch
 * from the list's resourceVersion with bookmarks, resuming from the last resourceVersion seen when a
 * stream ends; a 410 relists. When the control plane cannot be reached it retries with exponential
 * backoff, cut short by `wake()` (the heartbeat found it back). A stream that stays silent longer than
 * `idleTimeoutMs` (no event, no bookmark) is presumed dead and reopened.
 *
 * Every ADDED/MODIFIED object is handed to `onDeclaration`, which decides whether it is a new generation;
 * when it throws (e.g. the agent's store could not persist it), the watch relists so it is seen again.
 * A DELETED Declaration is logged and otherwise ignored: the node keeps what it was last told.
 */
import type { Client, WatchStream } from '../../api/client/types.ts';
import { ApiError, type Status } from '../../api/meta/api-error.ts';
import type { WatchEvent } from '../../api/meta/types.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import type { Logger } from '../engine/types.ts';
import type { Reachability } from './reachability.ts';

/** Options of `startDeclarationWatch`. */
export interface DeclarationWatchOptions {
  client: Client;
  node: string;
  reach: Reachability;
  logger: Logger;
  onDeclaration(obj: Declaration): Promise<void>;
  /** Reconnect delays: `initialMs * 2^n` up to `maxMs`. Default 250 ms and 5 s. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Default 60 s (the server sends a bookmark or heartbeat every 15 s). */
  idleTimeoutMs?: number;
}

/** A running watch loop. */
export interface DeclarationWatch {
  /** Ends a backoff pause now (the control plane is back). */
  wake(): void;
  stop(): Promise<void>;
}

/** Starts the watch loop in the background. */
export function startDeclarationWatch(opts: DeclarationWatchOptions): DeclarationWatch {
  const { client, node, reach, logger } = opts;
  const fieldSelector = `metadata.name=${node}`;
  const initialMs = opts.backoff?.initialMs ?? 250;
  const maxMs = opts.backoff?.maxMs ?? 5000;
  let rv = '';
  let failures = 0;
  let stopped = false;
  let stream: WatchStream | undefined;
  let nap: { timer: NodeJS.Timeout; done: () => void } | undefined;

  const pause = (): Promise<void> => new Promise<void>((resolve) => {
    const ms = Math.min(initialMs * 2 ** Math.min(failures, 20), maxMs);
    failures++;
    const done = (): void => { clearTimeout(timer); nap = undefined; resolve(); };
    const timer = setTimeout(done, ms);
    nap = { timer, done };
  });

  async function relist(): Promise<void> {
    const list = await client.list('declarations', { fieldSelector });
    reach.succeeded();
    for (const item of list.items) await opts.onDeclaration(item as Declaration);
    rv = list.metadata.resourceVersion;
  }

  async function handle(ev: WatchEvent): Promise<void> {
    if (ev.type === 'ERROR') {
      const s = ev.object as unknown as Partial<Status>;
      throw ApiError.fromStatus(s, s.code ?? 500);
    }
    if (ev.type === 'ADDED' || ev.type === 'MODIFIED') await opts.onDeclaration(ev.object as Declaration);
    if (ev.type === 'DELETED') logger.info('Observed Declaration deleted; kept running the last one received', { node });
    if (ev.object.metadata?.resourceVersion) rv = ev.object.metadata.resourceVersion;
  }

  /** Watches from `rv` until the stream ends; returns whether any event arrived. */
  async function watchOnce(): Promise<boolean> {
    const s = await client.watch('declarations', { fieldSelector, resourceVersion: rv, allowWatchBookmarks: true });
    stream = s;
    reach.succeeded();
    if (stopped) s.close();
    let idle = setTimeout(() => s.close(), opts.idleTimeoutMs ?? 60_000);
    let received = false;
    try {
      for await (const ev of s.events) {
        clearTimeout(idle);
        idle = setTimeout(() => s.close(), opts.idleTimeoutMs ?? 60_000);
        if (stopped) break;
        await handle(ev);
        received = true;
        failures = 0;
      }
    } finally {
      clearTimeout(idle);
      s.close();
      stream = undefined;
    }
    return received;
  }

  async function onFailure(e: unknown): Promise<void> {
    if (e instanceof ApiError && e.code === 410) {
      logger.info('Watch expired, relisting', { node, plural: 'declarations', resourceVersion: rv });
      rv = '';
      if (failures++ === 0) return;
    } else if (!reach.failed(e)) {
      rv = '';
      logger.error('Failed to watch Declaration', { node, error: (e as Error).message });
    }
    await pause();
  }

  async function run(): Promise<void> {
    while (!stopped) {
      try {
        if (rv === '') await relist();
        if (!stopped && !(await watchOnce()) && !stopped) await pause();
      } catch (e) {
        if (!stopped) await onFailure(e);
      }
    }
  }

  const loop = run();
  return {
    wake() {
      failures = 0;
      nap?.done();
    },
    async stop() {
      stopped = true;
      stream?.close();
      nap?.done();
      await loop;
    },
  };
}
