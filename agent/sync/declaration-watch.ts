/**
 * The agent's watch of its own Declaration (`fieldSelector=metadata.name=<node>`), on the list-then-watch
 * loop of api/client/list-watch.ts: list once, then watch from the list's resourceVersion with bookmarks and
 * without the events of status-only changes (`omitStatusUpdates`: the agent's own status writes), resuming
 * from the last resourceVersion seen when a stream ends; a 410 relists. When the control plane
 * cannot be reached it retries with exponential backoff, cut short by `wake()` (the heartbeat found it
 * back). A stream that stays silent longer than `idleTimeoutMs` (no event, no bookmark) is presumed dead
 * and reopened. Every answer and every failure to reach the control plane is recorded in `reach`.
 *
 * Every ADDED/MODIFIED object is handed to `onDeclaration`, which decides whether it is a new generation;
 * when it throws (e.g. the agent's store could not persist it), the watch relists so it is seen again.
 * A DELETED Declaration is logged and otherwise ignored: the node keeps what it was last told.
 */
import { startListWatch } from '../../api/client/list-watch.ts';
import type { Client } from '../../api/client/types.ts';
import type { Clock } from '../../api/meta/clock.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import type { Logger } from '../engine/types.ts';
import type { Reachability } from './reachability.ts';

/** The default jitter of the reconnect delays (see DeclarationWatchOptions.backoff). */
export const RECONNECT_JITTER = 0.5;

/**
 * The default longest reconnect delay, as client-go's reflectors back off to 30 s. While the control plane cannot be
 * reached the heartbeat probes it every interval and wakes the watch as soon as one gets through (sync.ts), so the
 * watch need not probe it too. With 5 s here, each of 5,000 agents retried every 2.5 to 5 s: over a thousand refused
 * connection attempts a second to a control plane that was down, each then a TLS socket made on the agent's side (in
 * bench/herd-probe.ts, a third of the simulated agents' CPU, taken from the control plane starting on the same machine).
 * A refused attempt is now a plain TCP one (api/client/connect.ts tcpThenTls), a fifth of that.
 */
export const RECONNECT_MAX_MS = 30_000;

/** A watch stream silent this long (no event, no bookmark, no keep-alive) is presumed dead and re-opened. */
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 60_000;

/** Options of `startDeclarationWatch`. */
export interface DeclarationWatchOptions {
  client: Client;
  node: string;
  reach: Reachability;
  logger: Logger;
  onDeclaration(obj: Declaration): Promise<void>;
  /** Called with each Declaration of a list (the control plane's copy, status included), before onDeclaration. */
  onListed?(obj: Declaration): Promise<void>;
  /**
   * Reconnect delays: `initialMs * 2^n` up to `maxMs`, each shortened by a random part of at most `jitter` (0 to 1).
   * Default 250 ms, RECONNECT_MAX_MS and RECONNECT_JITTER: the agents of a mesh whose control plane restarted do
   * not all retry at once, and `wake()` ends the wait when the heartbeat finds the control plane back.
   */
  backoff?: { initialMs?: number; maxMs?: number; jitter?: number; random?: () => number };
  /** Default DEFAULT_WATCH_IDLE_TIMEOUT_MS (the server sends a bookmark or heartbeat every 30 s). */
  idleTimeoutMs?: number;
  clock?: Clock;
}

/** A running watch loop. */
export interface DeclarationWatch {
  /** Ends a backoff pause now (the control plane is back). */
  wake(): void;
  stop(): Promise<void>;
}

/** Starts the watch loop in the background. */
export function startDeclarationWatch(opts: DeclarationWatchOptions): DeclarationWatch {
  const { node, reach, logger } = opts;
  return startListWatch<Declaration>({
    client: opts.client,
    plural: 'declarations',
    fieldSelector: `metadata.name=${node}`,
    // The agent writes the Declaration's status and has each write's result in its answer: the same change back as
    // an event would only cost the control plane a write to this socket and the agent a parse, per node and change.
    omitStatusUpdates: true,
    clock: opts.clock,
    logger,
    logFields: { node },
    backoff: {
      baseMs: opts.backoff?.initialMs ?? 250,
      maxMs: opts.backoff?.maxMs ?? RECONNECT_MAX_MS,
      jitter: opts.backoff?.jitter ?? RECONNECT_JITTER,
      random: opts.backoff?.random,
    },
    idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS,
    async onList(items) {
      for (const item of items) {
        await opts.onListed?.(item);
        await opts.onDeclaration(item);
      }
    },
    async onEvent(ev) {
      if (ev.type === 'DELETED')
        logger.info('Observed Declaration deleted; kept running the last one received', { node });
      else await opts.onDeclaration(ev.object);
    },
    onContact: () => reach.succeeded('watch'),
    onFailure(e) {
      if (!reach.failed(e)) logger.error('Failed to watch Declaration', { node, error: (e as Error).message });
    },
  });
}
