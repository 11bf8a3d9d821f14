/**
 * An informer: keeps a local cache of one kind in step with the API server and reports every change.
 *
 * It runs the list-then-watch loop of list-watch.ts (relist on 410, exponential backoff on failures, on
 * the injectable clock); a relist reports the differences against its cache. Nothing is ever thrown out
 * of its loop: a handler that throws is logged.
 */
import type { Client } from './types.ts';
import type { KubeObject } from '../meta/types.ts';
import { realClock, type Clock, type TimerHandle } from '../meta/clock.ts';
import { deepFreeze } from '../meta/frozen.ts';
import { createJsonLogger, type Logger } from '../meta/logger.ts';
import { startListWatch, type ListWatch } from './list-watch.ts';
import { ObjectCache, type CacheChange, type IndexFunc, type InformerEventType } from './object-cache.ts';

export type { IndexFunc, InformerEventType } from './object-cache.ts';

/** Called for each change: `old` is the cached object before a MODIFIED or DELETED (if it was cached). */
export type EventHandler<T extends KubeObject = KubeObject> = (type: InformerEventType, obj: T, old?: T) => void;

/** Options of createInformer. */
export interface InformerOptions<T extends KubeObject = KubeObject> {
  client: Client;
  /** The kind to follow, by plural (e.g. `nodes`). */
  plural: string;
  labelSelector?: string;
  fieldSelector?: string;
  clock?: Clock;
  /** When > 0, every cached object is reported again as MODIFIED (obj === old) this often. */
  resyncMs?: number;
  onEvent?: EventHandler<T>;
  logger?: Logger;
  /** Retry delays after failures: `baseMs * 2^n` up to `maxMs`. Default 250 ms and 30 s. */
  backoff?: { baseMs?: number; maxMs?: number };
}

/** A running list+watch of one kind with its cache. */
export interface Informer<T extends KubeObject = KubeObject> {
  readonly plural: string;
  /** Starts listing and watching in the background; idempotent. */
  start(): void;
  /** Stops the loop, closes the watch and resolves once the loop has ended. */
  stop(): Promise<void>;
  /** True once the first list has filled the cache. */
  hasSynced(): boolean;
  /** Resolves true once synced, or false if the informer is stopped first. */
  waitForSync(): Promise<boolean>;
  /** The cached object of that name (shared and frozen: change a copy). */
  get(name: string): T | undefined;
  /** Every cached object, sorted by name. */
  list(): T[];
  /** Adds a named index of the cache (shared informers: the first function added under a name is kept). */
  addIndex(name: string, fn: IndexFunc<T>): void;
  /** The cached objects with `value` in index `name`, sorted by name (O(matches), no scan of the cache). */
  byIndex(name: string, value: string): T[];
  /** Adds a handler; if the cache is already synced, it first receives ADDED for every cached object. */
  addEventHandler(handler: EventHandler<T>): () => void;
  /** The resourceVersion the next watch would start from. */
  lastResourceVersion(): string;
}

/** Creates an informer for one kind; call `start()` to run it. */
export function createInformer<T extends KubeObject = KubeObject>(opts: InformerOptions<T>): Informer<T> {
  return new ListWatchInformer<T>(opts);
}

class ListWatchInformer<T extends KubeObject> implements Informer<T> {
  readonly plural: string;
  private readonly opts: InformerOptions<T>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly resyncMs: number;
  private readonly cache = new ObjectCache<T>();
  private readonly handlers = new Set<EventHandler<T>>();
  private syncWaiters: Array<(ok: boolean) => void> = [];
  private synced = false;
  private started = false;
  private stopped = false;
  private loop?: ListWatch;
  private resyncTimer?: TimerHandle;

  constructor(opts: InformerOptions<T>) {
    this.plural = opts.plural;
    this.opts = opts;
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger ?? createJsonLogger();
    this.resyncMs = opts.resyncMs ?? 0;
    if (opts.onEvent) this.handlers.add(opts.onEvent);
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    const { client, plural, labelSelector, fieldSelector, backoff } = this.opts;
    this.loop = startListWatch<T>({
      client,
      plural,
      labelSelector,
      fieldSelector,
      backoff,
      clock: this.clock,
      logger: this.logger,
      onList: (items) => this.replace(items.map(deepFreeze)),
      onEvent: (ev) => {
        const change = this.cache.apply(ev.type === 'DELETED' ? ev : { ...ev, object: deepFreeze(ev.object) });
        if (change) this.emit(change);
      },
    });
    this.scheduleResync();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.resyncTimer !== undefined) this.clock.clearTimeout(this.resyncTimer);
    for (const w of this.syncWaiters.splice(0)) w(false);
    await this.loop?.stop();
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  get(name: string): T | undefined {
    return this.cache.get(name);
  }

  list(): T[] {
    return this.cache.list();
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    this.cache.addIndex(name, fn);
  }

  byIndex(name: string, value: string): T[] {
    return this.cache.byIndex(name, value);
  }

  addEventHandler(handler: EventHandler<T>): () => void {
    this.handlers.add(handler);
    if (this.synced) for (const obj of this.list()) this.call(handler, { type: 'ADDED', obj });
    return () => {
      this.handlers.delete(handler);
    };
  }

  lastResourceVersion(): string {
    return this.loop?.resourceVersion() ?? '';
  }

  /** Replaces the cache with a fresh list and reports what changed against it. */
  private replace(items: T[]): void {
    for (const change of this.cache.replace(items)) this.emit(change);
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w(true);
    }
  }

  private scheduleResync(): void {
    if (this.resyncMs <= 0 || this.stopped) return;
    this.resyncTimer = this.clock.setTimeout(() => {
      if (this.synced) for (const obj of this.list()) this.emit({ type: 'MODIFIED', obj, old: obj });
      this.scheduleResync();
    }, this.resyncMs);
  }

  private emit(change: CacheChange<T>): void {
    for (const h of [...this.handlers]) this.call(h, change);
  }

  private call(h: EventHandler<T>, { type, obj, old }: CacheChange<T>): void {
    try {
      h(type, obj, old);
    } catch (e) {
      this.logger.error('Event handler failed', { plural: this.plural, name: obj.metadata?.name, error: e });
    }
  }
}
