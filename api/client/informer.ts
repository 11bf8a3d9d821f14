/**
 * An informer: keeps a local cache of one kind in step with the API server and reports every change.
 *
 * It lists (remembering the resourceVersion), then watches from there with bookmarks, re-watching from the
 * last seen resourceVersion whenever a stream ends. A 410 (expired resourceVersion) makes it relist and
 * report the differences against its cache; any other failure (server unreachable, 5xx) is retried with
 * exponential backoff on the injectable clock. Nothing is ever thrown out of its loop.
 */
import type { Client, ClientListOptions, WatchStream } from './types.ts';
import type { KubeObject, WatchEvent } from '../meta/types.ts';
import { ApiError, type Status } from '../meta/api-error.ts';
import { Backoff, realClock, sleep, type Clock, type Sleep, type TimerHandle } from '../meta/clock.ts';
import { createJsonLogger, type Logger } from '../meta/logger.ts';
import { ObjectCache, type CacheChange, type InformerEventType } from './object-cache.ts';

export type { InformerEventType } from './object-cache.ts';

/** Called for each change: `old` is the cached object before a MODIFIED or DELETED (if it was cached). */
export type EventHandler = (type: InformerEventType, obj: KubeObject, old?: KubeObject) => void;

/** Options of createInformer. */
export interface InformerOptions {
  client: Client;
  /** The kind to follow, by plural (e.g. `nodes`). */
  plural: string;
  labelSelector?: string;
  fieldSelector?: string;
  clock?: Clock;
  /** When > 0, every cached object is reported again as MODIFIED (obj === old) this often. */
  resyncMs?: number;
  onEvent?: EventHandler;
  logger?: Logger;
  /** Retry delays after failures: `baseMs * 2^n` up to `maxMs`. Default 250 ms and 30 s. */
  backoff?: { baseMs?: number; maxMs?: number };
}

/** A running list+watch of one kind with its cache. */
export interface Informer {
  readonly plural: string;
  /** Starts listing and watching in the background; idempotent. */
  start(): void;
  /** Stops the loop, closes the watch and resolves once the loop has ended. */
  stop(): Promise<void>;
  /** True once the first list has filled the cache. */
  hasSynced(): boolean;
  /** Resolves true once synced, or false if the informer is stopped first. */
  waitForSync(): Promise<boolean>;
  /** The cached object of that name (shared: clone before changing it). */
  get(name: string): KubeObject | undefined;
  /** Every cached object, sorted by name. */
  list(): KubeObject[];
  /** Adds a handler; if the cache is already synced, it first receives ADDED for every cached object. */
  addEventHandler(handler: EventHandler): () => void;
  /** The resourceVersion the next watch would start from. */
  lastResourceVersion(): string;
}

/** Creates an informer for one kind; call `start()` to run it. */
export function createInformer(opts: InformerOptions): Informer {
  return new ListWatchInformer(opts);
}

/** True when `e` means the resourceVersion is too old (HTTP 410 Gone / Expired). */
export function isGone(e: unknown): boolean {
  return e instanceof ApiError && e.code === 410;
}

class ListWatchInformer implements Informer {
  readonly plural: string;
  private readonly client: Client;
  private readonly selectors: ClientListOptions;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly resyncMs: number;
  private readonly backoff: Backoff;
  private readonly cache = new ObjectCache();
  private readonly handlers = new Set<EventHandler>();
  private syncWaiters: Array<(ok: boolean) => void> = [];
  private rv = '';
  private synced = false; private started = false; private stopped = false;
  private needList = true;
  private goneInARow = 0;
  private stream?: WatchStream;
  private nap?: Sleep;
  private resyncTimer?: TimerHandle;
  private loop: Promise<void> = Promise.resolve();

  constructor(opts: InformerOptions) {
    this.plural = opts.plural;
    this.client = opts.client;
    this.selectors = { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector };
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger ?? createJsonLogger();
    this.resyncMs = opts.resyncMs ?? 0;
    this.backoff = new Backoff({ baseMs: opts.backoff?.baseMs ?? 250, maxMs: opts.backoff?.maxMs ?? 30_000 });
    if (opts.onEvent) this.handlers.add(opts.onEvent);
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.loop = this.run();
    this.scheduleResync();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stream?.close();
    this.nap?.cancel();
    if (this.resyncTimer !== undefined) this.clock.clearTimeout(this.resyncTimer);
    for (const w of this.syncWaiters.splice(0)) w(false);
    await this.loop;
  }

  hasSynced(): boolean { return this.synced; }

  waitForSync(): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  get(name: string): KubeObject | undefined { return this.cache.get(name); }

  list(): KubeObject[] { return this.cache.list(); }

  addEventHandler(handler: EventHandler): () => void {
    this.handlers.add(handler);
    if (this.synced) for (const obj of this.list()) this.call(handler, { type: 'ADDED', obj });
    return () => { this.handlers.delete(handler); };
  }

  lastResourceVersion(): string { return this.rv; }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (this.needList) await this.relist();
        if (!this.stopped) await this.watchOnce();
      } catch (e) {
        await this.onFailure(e);
      }
    }
  }

  /** Lists, replaces the cache and reports what changed against it. */
  private async relist(): Promise<void> {
    const list = await this.client.list(this.plural, this.selectors);
    if (this.stopped) return;
    for (const change of this.cache.replace(list.items)) this.emit(change);
    this.rv = list.metadata.resourceVersion;
    this.needList = false;
    this.logger.info('Listed objects', { plural: this.plural, count: this.cache.size, resourceVersion: this.rv });
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w(true);
    }
  }

  /** Watches from the last resourceVersion until the stream ends; backs off if it ended without events. */
  private async watchOnce(): Promise<void> {
    const opts = { ...this.selectors, resourceVersion: this.rv, allowWatchBookmarks: true };
    const stream = await this.client.watch(this.plural, opts);
    this.stream = stream;
    if (this.stopped) stream.close();
    let received = false;
    try {
      for await (const ev of stream.events) {
        if (this.stopped) break;
        this.apply(ev);
        this.backoff.reset();
        this.goneInARow = 0;
        received = true;
      }
    } finally {
      stream.close();
      this.stream = undefined;
    }
    if (received || this.stopped) return;
    const retryInMs = this.backoff.next();
    this.logger.info('Watch ended without events', { plural: this.plural, retryInMs });
    await this.pause(retryInMs);
  }

  /** Applies one watch event to the cache; throws the ApiError of an ERROR event. */
  private apply(ev: WatchEvent): void {
    if (ev.type === 'ERROR') {
      const status = ev.object as unknown as Partial<Status>;
      throw ApiError.fromStatus(status, status.code ?? 500);
    }
    const rv = ev.object.metadata?.resourceVersion;
    if (rv) this.rv = rv;
    const change = this.cache.apply(ev);
    if (change) this.emit(change);
  }

  private async onFailure(e: unknown): Promise<void> {
    if (this.stopped) return;
    if (isGone(e)) {
      this.logger.info('Watch expired, relisting', { plural: this.plural, resourceVersion: this.rv });
      this.needList = true;
      // A 410 relists at once; 410s in a row without any event in between back off.
      if (this.goneInARow++ > 0) await this.pause(this.backoff.next());
      return;
    }
    const retryInMs = this.backoff.next();
    this.logger.error('List or watch failed', { plural: this.plural, error: e, retryInMs });
    await this.pause(retryInMs);
  }

  /** Sleeps `ms` on the clock (cut short by stop). */
  private async pause(ms: number): Promise<void> {
    this.nap = sleep(this.clock, ms);
    await this.nap.promise;
    this.nap = undefined;
  }

  private scheduleResync(): void {
    if (this.resyncMs <= 0 || this.stopped) return;
    this.resyncTimer = this.clock.setTimeout(() => {
      if (this.synced) for (const obj of this.list()) this.emit({ type: 'MODIFIED', obj, old: obj });
      this.scheduleResync();
    }, this.resyncMs);
  }

  private emit(change: CacheChange): void {
    for (const h of [...this.handlers]) this.call(h, change);
  }

  private call(h: EventHandler, { type, obj, old }: CacheChange): void {
    try {
      h(type, obj, old);
    } catch (e) {
      this.logger.error('Event handler failed', { plural: this.plural, name: obj.metadata?.name, error: e });
    }
  }
}
