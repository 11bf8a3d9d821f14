/**
 * `GET /<plural>?watch=1`: a chunked `application/json` stream of `{"type":…,"object":…}` lines.
 *
 * - No resourceVersion (or `0`): ADDED for every current object first, then changes; otherwise every change
 *   after that resourceVersion. Without selectors, as JSON, the ADDED events come from the store's shared
 *   snapshot (api/store/watch-snapshots.ts), written chunk by chunk as the client drains (backpressure.ts),
 *   and the watch goes on from the snapshot's resourceVersion.
 * - Too old a resourceVersion: like kube-apiserver, HTTP 200 and then one `ERROR` event whose object is a
 *   `Status` with code 410 (reason Expired), and the stream ends. Clients relist.
 * - `allowWatchBookmarks=true`: a `BOOKMARK` event every heartbeat interval (DEFAULT_WATCH_HEARTBEAT_MS)
 *   carrying the newest resourceVersion the client has seen everything up to (the one it resumed from, or its
 *   newest event; a watch from 0 has none until its first event). Otherwise, and until then, a bare `\n` keeps
 *   idle connections alive.
 * - `omitStatusUpdates=true` (ours; kube-apiserver has no such parameter): no MODIFIED event for a change of
 *   nothing but `.status` (a write of the status subresource). The agent watches its Declaration so: it writes
 *   that status itself, and each of its writes would otherwise come back to it as an event to encode, send and
 *   parse, the only one most changes bring it besides the new spec (api/store/types.ts WatchOptions).
 * - `timeoutSeconds`: the stream ends cleanly after that long. A client that reads slowly pauses its store watch
 *   whenever its socket's buffer is full, until it drains (the events wait in the store's shared log; if the log
 *   drops some first, the client gets the 410 ERROR and relists), so it holds about one buffer of memory, not a
 *   queue of every event. One that stops reading is cut off once too much is buffered for it anyway; a closed
 *   client stops its store watch.
 * - To a client in this process (the controllers' informers), a JSON watch hands each event over as the object
 *   itself, frozen, instead of its line (api/server/in-process-values.ts); no bare `\n` and no shared snapshot.
 */
import { ApiError } from '../../meta/api-error.ts';
import { parseFieldSelector, parseLabelSelector } from '../../meta/selectors.ts';
import { API_VERSION, type KubeObject } from '../../meta/types.ts';
import type { StoreWatchEvent, Watch, WatchOptions } from '../../store/types.ts';
import type { WatchSnapshot } from '../../store/watch-snapshots.ts';
import { writeChunks } from './backpressure.ts';
import type { ResourceRequest } from './context.ts';
import { boolParam, selectorParams } from './context.ts';
import { encodeEvent } from './event-encoder.ts';
import { valueSink, type ValueSink } from '../in-process-values.ts';
import { deepFreeze } from '../../meta/frozen.ts';
import { toApiError } from '../http/respond.ts';
import type { Representation } from './table.ts';
import { tableContentType } from './table.ts';

/**
 * How often an idle watch gets a bookmark (or a bare `\n`) by default: 30 s. kube-apiserver sends bookmarks
 * about once a minute; ours also tell the agent its stream is alive, and the agent presumes a stream silent for
 * 60 s dead (agent/sync/declaration-watch.ts), so half of that leaves room for one late beat. Every idle watch
 * costs one TLS write per interval: at 5,000 agents, 15 s was 333 writes a second, 30 s is 167.
 */
export const DEFAULT_WATCH_HEARTBEAT_MS = 30_000;

/** The longest `timeoutSeconds` a timer can wait (2^31-1 ms); a longer one is clamped to it, not fired at once. */
const MAX_TIMEOUT_SECONDS = Math.floor(0x7fffffff / 1000);

/** What a slow client may have buffered before it is cut off. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** The open watches of an app, so that closing the app ends them. */
export class WatchRegistry {
  private readonly open = new Set<() => void>();

  add(end: () => void): void {
    this.open.add(end);
  }
  delete(end: () => void): void {
    this.open.delete(end);
  }
  get size(): number {
    return this.open.size;
  }

  /** Ends every open watch stream cleanly. */
  closeAll(): void {
    for (const end of [...this.open]) end();
  }
}

/** Options of `serveWatch`. */
export interface ServeWatchOptions {
  registry: WatchRegistry;
  heartbeatMs: number;
  /** Another view of the objects (the core/v1 events view): each object as sent, undefined to leave it out. */
  view?: { apiVersion: string; map: (obj: KubeObject) => KubeObject | undefined };
}

/** Serves one watch request until the client goes, the timeout passes or the app closes. */
export function serveWatch(r: ResourceRequest, rep: Representation, opts: ServeWatchOptions): void {
  const params = watchParams(r);
  new WatchResponse(r, rep, opts, params).start(params);
}

/** What a watch stream keeps of its request: not the request's parsed URL and query, held by 5,000 open watches. */
type WatchRequest = Pick<ResourceRequest, 'res' | 'store' | 'info' | 'logger'>;

/** One watch stream: the store watch, its timers and the response it writes to. */
class WatchResponse {
  #watch?: Watch;
  #ended = false;
  /** The store watch is paused until the response drains. */
  #paused = false;
  /** The newest resourceVersion this client is known to have seen everything up to (bookmarks carry it). */
  #lastRv: string | undefined;
  #heartbeat?: NodeJS.Timeout;
  #timeout?: NodeJS.Timeout;
  readonly #end = (): void => this.end();
  /** Set for a JSON watch by a client in this process: it takes the events as objects. */
  readonly #sink: ValueSink | undefined;
  private readonly r: WatchRequest;

  constructor(
    { res, store, info, logger }: ResourceRequest,
    private readonly rep: Representation,
    private readonly opts: ServeWatchOptions,
    params: WatchParams,
  ) {
    this.r = { res, store, info, logger };
    const rv = params.resourceVersion;
    this.#lastRv = rv && rv !== '0' ? rv : undefined;
    this.#sink = rep.as === 'json' ? valueSink(res) : undefined;
  }

  start(params: WatchParams): void {
    const { res } = this.r;
    this.#sink?.streamValues();
    res.writeHead(200, {
      'Content-Type': this.rep.as === 'table' ? tableContentType(this.rep) : 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    this.opts.registry.add(this.#end);
    res.once('close', this.#end);
    const { bookmarks, timeoutMs, ...storeOpts } = params;
    const snapshot = this.#sharedSnapshot(storeOpts);
    if (snapshot) void this.#fromSnapshot(snapshot, storeOpts);
    else this.#watchStore(storeOpts);
    if (this.#ended) return;
    this.#heartbeat = setInterval(() => {
      if (bookmarks && this.#lastRv) this.#bookmark(this.#lastRv);
      else if (!this.#sink) this.#write('\n');
    }, this.opts.heartbeatMs);
    if (timeoutMs !== undefined) this.#timeout = setTimeout(this.#end, timeoutMs);
  }

  /**
   * The store's shared initial events, for an unfiltered JSON watch from resourceVersion 0 of a store that has them
   * (not for another view of the objects: the snapshot holds them as stored).
   */
  #sharedSnapshot(opts: WatchOptions): Promise<WatchSnapshot> | undefined {
    const from = opts.resourceVersion;
    if ((from && from !== '0') || opts.labelSelector || opts.fieldSelector || this.rep.as !== 'json') return undefined;
    if (this.opts.view || this.#sink) return undefined;
    return this.r.store.watchSnapshot?.(this.r.info.plural);
  }

  /** Sends the snapshot as the client drains, then watches the store from its resourceVersion. */
  async #fromSnapshot(pending: Promise<WatchSnapshot>, opts: WatchOptions): Promise<void> {
    try {
      const snapshot = await pending;
      if (!(await writeChunks(this.r.res, snapshot.chunks, () => this.#ended))) return;
      this.#lastRv = snapshot.resourceVersion;
      this.#watchStore({ ...opts, resourceVersion: snapshot.resourceVersion });
    } catch (e) {
      this.#fail(e);
    }
  }

  #watchStore(opts: WatchOptions): void {
    try {
      this.#watch = this.r.store.watch(this.r.info.plural, opts, (e) => this.#onEvent(e));
    } catch (e) {
      this.#fail(e);
    }
  }

  /** Ends the stream with an ERROR event carrying the failure's Status. */
  #fail(e: unknown): void {
    const status = toApiError(e, this.r.logger, { plural: this.r.info.plural, watch: true }).toStatus();
    const event = { type: 'ERROR' as const, object: status };
    this.#write(this.#sink ? event : JSON.stringify(event) + '\n');
    this.end();
  }

  /** Ends the stream cleanly (idempotent) and stops the store watch. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#watch?.stop();
    clearInterval(this.#heartbeat);
    clearTimeout(this.#timeout);
    this.opts.registry.delete(this.#end);
    const { res } = this.r;
    if (!res.writableEnded && !res.destroyed) res.end();
  }

  #onEvent(e: StoreWatchEvent): void {
    // The store's events carry it: reading `object` may decode one again (api/store/store-event.ts).
    const rv = e.rv !== undefined ? String(e.rv) : e.object.metadata?.resourceVersion;
    if (e.type !== 'ERROR' && rv && (this.#lastRv === undefined || Number(rv) > Number(this.#lastRv)))
      this.#lastRv = rv;
    const view = this.opts.view;
    if (view && e.type !== 'ERROR' && e.type !== 'BOOKMARK') {
      const object = view.map(e.object);
      if (object)
        this.#write(
          this.#sink ? { type: e.type, object } : encodeEvent({ type: e.type, object }, this.r.info, this.rep),
        );
      return;
    }
    this.#write(this.#sink ? { type: e.type, object: e.object } : encodeEvent(e, this.r.info, this.rep));
    if (e.type === 'ERROR') this.end();
  }

  #bookmark(resourceVersion: string): void {
    const apiVersion = this.opts.view?.apiVersion ?? API_VERSION;
    const event = {
      type: 'BOOKMARK' as const,
      object: { apiVersion, kind: this.r.info.kind, metadata: { resourceVersion } },
    };
    this.#write(this.#sink ? event : JSON.stringify(event) + '\n');
  }

  /** Writes one event's line, or hands the event (frozen) to a client in this process. */
  #write(out: string | StoreWatchEvent): void {
    const { res } = this.r;
    if (this.#ended || res.destroyed) return;
    const sent = typeof out === 'string' ? res.write(out) : this.#sink?.writeValue(deepFreeze(out)) !== false;
    if (!sent && this.#watch?.pause && !this.#paused) {
      this.#paused = true;
      this.#watch.pause();
      res.once('drain', () => {
        this.#paused = false;
        this.#watch?.resume?.();
      });
    }
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      this.r.logger.error('Cut off a watch client that stopped reading', {
        plural: this.r.info.plural,
        bufferedBytes: res.writableLength,
      });
      this.end();
      res.destroy();
    }
  }
}

interface WatchParams {
  resourceVersion?: string;
  labelSelector?: string;
  fieldSelector?: string;
  bookmarks: boolean;
  omitStatusUpdates: boolean;
  timeoutMs?: number;
}

/** Reads and checks the watch's query parameters before any byte is sent, so that mistakes are plain 400s. */
function watchParams(r: ResourceRequest): WatchParams {
  const sel = selectorParams(r.query);
  if (r.name !== undefined) {
    const byName = `metadata.name=${r.name}`;
    sel.fieldSelector = sel.fieldSelector ? `${sel.fieldSelector},${byName}` : byName;
  }
  parseLabelSelector(sel.labelSelector ?? '');
  parseFieldSelector(sel.fieldSelector ?? '');
  const rv = r.query.get('resourceVersion') || undefined;
  if (rv !== undefined && !/^\d+$/.test(rv))
    throw ApiError.badRequest(`resourceVersion must be a decimal number, not "${rv}"`);
  const t = r.query.get('timeoutSeconds');
  if (t !== null && !/^\d+$/.test(t))
    throw ApiError.badRequest(`timeoutSeconds must be a non-negative integer, not "${t}"`);
  return {
    ...sel,
    ...(rv !== undefined ? { resourceVersion: rv } : {}),
    bookmarks: boolParam(r.query, 'allowWatchBookmarks'),
    omitStatusUpdates: boolParam(r.query, 'omitStatusUpdates'),
    ...(t !== null && Number(t) > 0 ? { timeoutMs: Math.min(Number(t), MAX_TIMEOUT_SECONDS) * 1000 } : {}),
  };
}
