/**
 * Watch fan-out: events are staged when a write is made, published (appended to the event log and handed
 * to watchers) only once the journal says they are durable, always in resourceVersion order. A new watch
 * first catches up (initial ADDED list, or replay from the log) on a later tick, then gets live events. A
 * consumer that cannot keep up pauses its watch: nothing is queued for it meanwhile (the events are in the log,
 * shared), and on resume it catches up from the log like a new watch — or gets 410 if the log has moved past it.
 * Events are shared objects: one change costs one StoreEvent however many watchers see it. A watch of one named
 * object from before the log resumes when that object has not changed since (`#resumeOne`).
 */
import { ApiError } from '../meta/api-error.ts';
import type { KubeObject } from '../meta/types.ts';
import { parseFieldSelector, parseLabelSelector, requiredName } from '../meta/selectors.ts';
import type { ListOptions, Watch, WatchOptions } from './types.ts';
import { StoreEvent } from './store-event.ts';
import type { StoreLogger } from './store-log.ts';
import { WatchLog } from './watch-log.ts';
import { WatchSnapshots, type WatchSnapshot, type WatchSnapshotStats } from './watch-snapshots.ts';
import { Watcher, type WatcherControl } from './watcher.ts';
import { WatcherRegistry } from './watcher-registry.ts';

/** Options of the WatchHub constructor. */
export interface WatchHubOptions {
  capacity: number;
  /** The store's (durable) resourceVersion at open, after any fence (index.ts). */
  startRv: number;
  /** The durable resourceVersion the journal held at open, before the fence: a watch from it resumes at `startRv`. */
  openedAtRv: number;
  logger: StoreLogger;
  /** Lists the current objects of a kind (for watches from resourceVersion 0). */
  list: (plural: string, opts: ListOptions) => { items: KubeObject[]; resourceVersion: string };
  /** The newest resourceVersion the store has issued (durable or not). */
  currentRv: () => number;
}

/** Watch registration, event log and delivery (see the file comment). */
export class WatchHub {
  readonly #log: WatchLog;
  readonly #logger: StoreLogger;
  readonly #list: WatchHubOptions['list'];
  readonly #currentRv: WatchHubOptions['currentRv'];
  readonly #watchers = new WatcherRegistry();
  readonly #unready = new Set<Watcher>();
  #staged: StoreEvent[] = [];
  #durableRv: number;
  /** True while publish() hands events to watchers. */
  #publishing = false;
  readonly #startRv: number;
  readonly #openedAtRv: number;
  /** Synthetic ADDED events by stored object, shared by every watch that starts from resourceVersion 0. */
  readonly #added = new WeakMap<KubeObject, StoreEvent>();
  readonly #snapshots: WatchSnapshots;
  /** What every watcher's stop, pause and resume call (one object for all: a watch holds no closures of its own). */
  readonly #control: WatcherControl = {
    stop: (w) => this.#remove(w),
    pause: (w) => this.#pause(w),
    resume: (w) => this.#resume(w),
    failed: (w, err) => this.#failed(w, err),
  };
  /** The newest published event of each stored object, by that object (see #supersede). */
  readonly #latest = new WeakMap<KubeObject, StoreEvent>();
  /** Snapshots waiting for their resourceVersion to be durable. */
  #durableWaiters: { rv: number; resolve: () => void }[] = [];

  constructor(opts: WatchHubOptions) {
    this.#log = new WatchLog({ capacity: opts.capacity, startRv: opts.startRv });
    this.#logger = opts.logger;
    this.#list = opts.list;
    this.#currentRv = opts.currentRv;
    this.#durableRv = opts.startRv;
    this.#startRv = opts.startRv;
    this.#openedAtRv = opts.openedAtRv;
    this.#snapshots = new WatchSnapshots({
      list: (plural) => this.#list(plural, {}),
      whenDurable: (rv) => this.#whenDurable(rv),
      eventsAfter: (rv) => (rv < this.#log.resumableFrom ? undefined : this.#log.countAfter(rv)),
      maxLag: Math.max(1, Math.floor(opts.capacity / 4)),
    });
  }

  /** The durable resourceVersion the journal held at open, before any fence. */
  get openedAtRv(): number {
    return this.#openedAtRv;
  }

  /** The newest resourceVersion whose write is durable (and published). */
  get durableRv(): number {
    return this.#durableRv;
  }

  /** Queues the events of a write that is not durable yet. */
  stage(events: StoreEvent[]): void {
    for (const e of events) this.#staged.push(e);
  }

  /** Publishes every staged event with rv ≤ `durableRv`: into the log, then to the watchers. */
  publish(durableRv: number): void {
    this.#durableRv = Math.max(this.#durableRv, durableRv);
    if (this.#durableWaiters.length > 0) this.#wakeDurableWaiters();
    let n = 0;
    while (n < this.#staged.length && this.#staged[n].rv <= durableRv) n++;
    if (n === 0) return;
    const events = this.#staged.slice(0, n);
    this.#staged = this.#staged.slice(n);
    const left: StoreEvent[] = [];
    for (const e of events) {
      const dropped = this.#log.push(e);
      if (dropped) left.push(dropped);
    }
    this.#publishing = true;
    try {
      for (const e of events) for (const w of this.#watchers.for(e)) if (w.ready) w.deliver(e);
    } finally {
      this.#publishing = false;
    }
    for (const e of events) this.#supersede(e);
    for (const e of left) this.#leftLog(e);
    for (const w of this.#unready) this.#catchUp(w);
  }

  /**
   * An event that left the log is no longer the one to supersede when its object changes next: nothing reads it
   * again (a watcher reads `prev` only while delivering, from the log or at publish), and held as its object's
   * latest event it would keep its JSON and its previous version's alive as long as the object is stored (at
   * N = 5,000, ~18,000 such events held ~23 MiB of JSON). The object's next event then keeps `prev` as the
   * stored object it was, which shares what did not change with the new one (frozen.ts).
   */
  #leftLog(e: StoreEvent): void {
    const object = e.heldObject;
    if (object !== undefined && this.#latest.get(object) === e) this.#latest.delete(object);
  }

  /**
   * Once `e` is published, the older versions of its object need not stay decoded in the log (store-event.ts):
   * the event that wrote `e.prev` drops its object, and `e` drops `prev`; both keep their JSON.
   */
  #supersede(e: StoreEvent): void {
    const prev = e.prev;
    const before = prev === undefined ? undefined : this.#latest.get(prev);
    if (before) {
      before.dropObject();
      e.dropPrev(before.objectJson);
    }
    if (e.type !== 'DELETED') this.#latest.set(e.object, e);
  }

  /** The shared initial events of an unfiltered watch from resourceVersion 0 (see Store.watchSnapshot). */
  snapshot(plural: string): Promise<WatchSnapshot> {
    return this.#snapshots.get(plural);
  }

  #whenDurable(rv: number): Promise<void> {
    if (rv <= this.#durableRv) return Promise.resolve();
    return new Promise((resolve) => this.#durableWaiters.push({ rv, resolve }));
  }

  #wakeDurableWaiters(): void {
    const due = this.#durableWaiters.filter((w) => w.rv <= this.#durableRv);
    this.#durableWaiters = this.#durableWaiters.filter((w) => w.rv > this.#durableRv);
    for (const w of due) w.resolve();
  }

  /** Starts a watch (see Store.watch). Throws BadRequest for bad selectors or resourceVersion, 410 when too old. */
  watch(plural: string, opts: WatchOptions, onEvent: (e: StoreEvent) => void): Watch {
    const label = parseLabelSelector(opts.labelSelector ?? '');
    const field = parseFieldSelector(opts.fieldSelector ?? '');
    let cursor: number;
    let initial: KubeObject[] | undefined;
    const from = opts.resourceVersion;
    if (from === undefined || from === '' || from === '0') {
      const listed = this.#list(plural, opts);
      initial = listed.items;
      cursor = Number(listed.resourceVersion);
    } else {
      if (!/^\d+$/.test(from))
        throw ApiError.badRequest(`invalid resourceVersion "${from}": expected a decimal number`);
      cursor = Number(from);
      // No durable write lies between the rv at open and the fence: a client up to date then has missed nothing.
      if (cursor === this.#openedAtRv) cursor = this.#startRv;
      if (cursor < this.#log.resumableFrom) cursor = this.#resumeOne(plural, opts, cursor);
      // A resourceVersion this store never issued (a client of a store restored from a backup, or one that
      // read a write a crash then lost): resuming from it would skip events, so the client must relist.
      if (cursor > this.#currentRv()) {
        throw ApiError.gone(`resource version ${cursor} is newer than this store's ${this.#currentRv()}: list again`);
      }
    }
    const w = new Watcher({
      plural,
      label,
      field,
      cursor,
      initial,
      omitStatusUpdates: opts.omitStatusUpdates,
      onEvent,
      control: this.#control,
    });
    this.#watchers.add(w);
    this.#unready.add(w);
    setImmediate(() => this.#catchUp(w));
    return w;
  }

  /** Stops delivering to `w` (its consumer is full); the events wait in the log. */
  #pause(w: Watcher): void {
    if (w.stopped || w.paused) return;
    // Outside publish(), a ready watch has had every published event it can see, though its cursor moved
    // only with those (watcher-registry.ts): it resumes from here, not from an older point the log may have dropped.
    if (w.ready && !this.#publishing) w.cursor = Math.max(w.cursor, this.#durableRv);
    w.paused = true;
    w.ready = false;
    this.#unready.add(w);
  }

  /** Delivers to `w` again, from the log first (on a later tick, like a new watch). */
  #resume(w: Watcher): void {
    if (w.stopped || !w.paused) return;
    w.paused = false;
    setImmediate(() => this.#catchUp(w));
  }

  /**
   * Where a watch of one named object (`metadata.name=X`, as each agent's of its own Declaration) from a
   * resourceVersion the event log no longer holds resumes: the log's start, when the object as it is now was last
   * written at or before that resourceVersion — nothing happened to it since (a change, or a deletion and
   * re-creation, would have given it a newer one), so no event it could see is missing. So the agents that
   * reconnect to a restarted control plane, whose log starts empty, resume their watches instead of each getting
   * a 410 and relisting. Else, and for a resourceVersion the journal did not hold at open (one past a fence), 410.
   */
  #resumeOne(plural: string, opts: WatchOptions, cursor: number): number {
    if (requiredName(parseFieldSelector(opts.fieldSelector ?? '')) === undefined) throw this.#tooOld(cursor);
    if (cursor > this.#openedAtRv && cursor < this.#startRv) throw this.#tooOld(cursor);
    const { items } = this.#list(plural, { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector });
    if (items.length !== 1 || !(Number(items[0].metadata?.resourceVersion) <= cursor)) throw this.#tooOld(cursor);
    return this.#log.resumableFrom;
  }

  #tooOld(rv: number): ApiError {
    return ApiError.gone(`too old resource version: ${rv} (oldest ${this.#log.resumableFrom})`);
  }

  #catchUp(w: Watcher): void {
    if (w.stopped || w.ready || w.paused) return;
    if (w.initial) {
      if (this.#durableRv < w.cursor) return; // the listed state is not all durable yet
      for (const object of w.initial) w.emit(this.#addedEvent(w.plural, object));
      w.initial = undefined;
    }
    if (w.cursor < this.#log.resumableFrom) {
      const status = this.#tooOld(w.cursor).toStatus();
      w.emit(new StoreEvent({ type: 'ERROR', object: status, plural: w.plural, rv: 0 }));
      this.#remove(w);
      return;
    }
    for (const e of this.#log.between(w.plural, w.cursor, this.#durableRv)) {
      w.deliver(e);
      if (w.paused || w.stopped) return; // the consumer is full: go on from the cursor when it resumes
    }
    w.cursor = Math.max(w.cursor, this.#durableRv);
    w.ready = true;
    this.#unready.delete(w);
  }

  #addedEvent(plural: string, object: KubeObject): StoreEvent {
    let e = this.#added.get(object);
    if (!e)
      this.#added.set(
        object,
        (e = new StoreEvent({ type: 'ADDED', object, plural, rv: Number(object.metadata.resourceVersion) })),
      );
    return e;
  }

  #failed(w: Watcher, err: unknown): void {
    this.#logger({
      msg: 'Stopped watch whose callback threw',
      level: 'error',
      plural: w.plural,
      error: err instanceof Error ? err.message : String(err),
    });
    this.#remove(w);
  }

  #remove(w: Watcher): void {
    w.stopped = true;
    this.#unready.delete(w);
    this.#watchers.delete(w);
  }

  /** Counters for `stats()`. */
  stats(): {
    watchers: number;
    eventLog: { size: number; capacity: number; resumableFrom: number };
    watchSnapshots: WatchSnapshotStats;
  } {
    return {
      watchers: this.#watchers.size,
      eventLog: { size: this.#log.size, capacity: this.#log.capacity, resumableFrom: this.#log.resumableFrom },
      watchSnapshots: this.#snapshots.stats(),
    };
  }
}
