/**
 * Bounds on concurrent requests, as kube-apiserver's `--max-requests-inflight` is, with a wait queue as its API
 * Priority and Fairness has: a request over a bound waits or is answered `429 TooManyRequests` with
 * `Retry-After`, before it reads a byte of its body or touches the store.
 *
 * - Short requests (everything but watches and followed logs): at most `maxRequestsInflight` in total, and at
 *   most `maxRequestsInflightPerClient` of one client (the admin, one node, or anonymous for `/join`), so that a
 *   burst from one client cannot take every slot from the agents. The admin's (meshctl's and the control plane's
 *   own controllers') are not counted in the total, as kube-apiserver's in-flight limit exempts system:masters:
 *   when thousands of agents fill it, the controllers that mark their Nodes reachable and the admin's commands
 *   are not refused with them (at N = 5,000 both were). The admin's requests over HTTPS stay bounded per client;
 *   the controllers' own (made in process) are not, since their workers bound them and a 429 would idle a worker
 *   for its `Retry-After` second: at N = 5,000 a change to every node had 140 of its Declaration writes refused so.
 * - A request over the total waits for a slot, in arrival order, up to `maxQueueWaitMs`, while fewer than
 *   `maxRequestsQueued` wait; a 429 only when the queue is full or its wait is over. A client's waiting requests
 *   count against its own bound. Without the queue, 5,000 agents reconnecting to a restarted control plane were
 *   refused 221,981 times in 180 s (44 per agent, each a request read and answered) and sent their heartbeats and
 *   log batches again and again (24 and 28 per agent), and not all of them were back by then; with it, none was
 *   refused, and all were back in 67–100 s, on half the CPU (bench/herd-probe.ts).
 * - Long-running requests (watches, `follow=true` logs): at most `maxWatchesPerClient` open per client.
 *
 * A slot is held until the response closes (finished, or the client went away); a client that goes away while
 * its request waits leaves the queue.
 */
import type { EventEmitter } from 'node:events';
import { ApiError, type LimitName } from '../../meta/api-error.ts';
import { realClock, type Clock, type TimerHandle } from '../../meta/clock.ts';

/** The bounds; `DEFAULT_INFLIGHT_LIMITS` says what each is when not given. */
export interface InflightLimits {
  maxRequestsInflight: number;
  maxRequestsInflightPerClient: number;
  maxWatchesPerClient: number;
  /** Requests over maxRequestsInflight that may wait for a slot at once; more get 429. */
  maxRequestsQueued: number;
  /** How long a request may wait for a slot before it gets 429, in ms. */
  maxQueueWaitMs: number;
  /** The `Retry-After` of a 429, in seconds. */
  retryAfterSeconds: number;
}

/**
 * kube-apiserver's default of 400 in flight; a quarter of it per client; 100 open watches per client. Up to
 * 10,000 requests wait, each at most 15 s (a quarter of kube-apiserver's request timeout, as APF's queues wait;
 * within the 30 s our clients wait for an answer): two per agent of a 5,000-node mesh.
 */
export const DEFAULT_INFLIGHT_LIMITS: InflightLimits = {
  maxRequestsInflight: 400,
  maxRequestsInflightPerClient: 100,
  maxWatchesPerClient: 100,
  maxRequestsQueued: 10_000,
  maxQueueWaitMs: 15_000,
  retryAfterSeconds: 1,
};

/** What `InflightLimiter.stats()` reports. */
export interface InflightStats {
  requestsInflight: number;
  /** Requests waiting for a slot. */
  requestsQueued: number;
  watchesOpen: number;
  rejectedRequests: number;
  rejectedWatches: number;
}

/**
 * What a request is exempt from: `false`, nothing; `'total'`, the total (the admin over HTTPS: bounded per client
 * only); `'all'`, every bound (the control plane's own controllers, in process: their workers bound them).
 */
export type Exemption = false | 'total' | 'all';

/** What the limiter needs of a response: its `close` event (a ServerResponse). */
export type Closing = Pick<EventEmitter, 'once' | 'off'>;

/** A request waiting for a slot. */
interface Waiting {
  admit: () => void;
  timer: TimerHandle;
}

/** Counts the requests in flight, queues or refuses those over a bound. */
export class InflightLimiter {
  readonly #limits: InflightLimits;
  readonly #clock: Clock;
  /** Short requests in flight, all of them (the stats). */
  #requests = 0;
  /** Those counted against maxRequestsInflight (not exempt). */
  #bounded = 0;
  #watches = 0;
  /** Per client: its short requests in flight or waiting. */
  readonly #requestsBy = new Map<string, number>();
  readonly #watchesBy = new Map<string, number>();
  /** The requests waiting for a slot, in arrival order (a Set iterates in insertion order). */
  readonly #queue = new Set<Waiting>();
  #rejectedRequests = 0;
  #rejectedWatches = 0;

  constructor(opts: { limits?: Partial<InflightLimits>; clock?: Clock } = {}) {
    this.#limits = { ...DEFAULT_INFLIGHT_LIMITS, ...opts.limits };
    this.#clock = opts.clock ?? realClock;
  }

  /**
   * Takes a slot for `res` (released when it closes) and returns undefined; or returns a promise that resolves
   * once a slot is taken for it (see the module comment); or sets `Retry-After` and throws 429 (or rejects with
   * it, when the wait was over). An `exempt` request is not counted in the total, and one exempt from `'all'` is
   * not refused by its client's bound either (it still counts in it, for the stats).
   */
  admit(res: Closing, client: string, longRunning: boolean, exempt: Exemption = false): Promise<void> | undefined {
    const l = this.#limits;
    if (longRunning) {
      if ((this.#watchesBy.get(client) ?? 0) >= l.maxWatchesPerClient) {
        this.#rejectedWatches++;
        throw this.#tooMany(
          `too many open watches of this client (at most ${l.maxWatchesPerClient})`,
          'watches_per_client',
        );
      }
      this.#watches++;
      bump(this.#watchesBy, client, 1);
      res.once('close', () => {
        this.#watches--;
        bump(this.#watchesBy, client, -1);
      });
      return undefined;
    }
    if (exempt !== 'all' && (this.#requestsBy.get(client) ?? 0) >= l.maxRequestsInflightPerClient)
      throw this.#refused();
    if (exempt || (this.#bounded < l.maxRequestsInflight && this.#queue.size === 0)) {
      bump(this.#requestsBy, client, 1);
      this.#start(res, client, exempt);
      return undefined;
    }
    if (this.#queue.size >= l.maxRequestsQueued) throw this.#refused();
    return this.#wait(res, client);
  }

  stats(): InflightStats {
    return {
      requestsInflight: this.#requests,
      requestsQueued: this.#queue.size,
      watchesOpen: this.#watches,
      rejectedRequests: this.#rejectedRequests,
      rejectedWatches: this.#rejectedWatches,
    };
  }

  /** Counts a request in flight (its client's count already includes it) until its response closes. */
  #start(res: Closing, client: string, exempt: Exemption): void {
    const counted = exempt ? 0 : 1;
    this.#requests++;
    this.#bounded += counted;
    res.once('close', () => {
      this.#requests--;
      this.#bounded -= counted;
      bump(this.#requestsBy, client, -1);
      this.#next();
    });
  }

  /** Queues a request: it starts when a slot frees, or is refused when its wait is over, or leaves if its client goes away. */
  #wait(res: Closing, client: string): Promise<void> {
    bump(this.#requestsBy, client, 1);
    return new Promise<void>((resolve, reject) => {
      const leave = (): void => {
        this.#queue.delete(waiting);
        this.#clock.clearTimeout(waiting.timer);
        res.off('close', gone);
      };
      const gone = (): void => {
        leave();
        bump(this.#requestsBy, client, -1);
      };
      const waiting: Waiting = {
        admit: () => {
          leave();
          this.#start(res, client, false);
          resolve();
        },
        timer: this.#clock.setTimeout(() => {
          gone();
          reject(this.#refused(`waited ${this.#limits.maxQueueWaitMs} ms for one`));
        }, this.#limits.maxQueueWaitMs),
      };
      this.#queue.add(waiting);
      res.once('close', gone);
    });
  }

  /** Starts waiting requests while there are slots. */
  #next(): void {
    for (const w of this.#queue) {
      if (this.#bounded >= this.#limits.maxRequestsInflight) return;
      w.admit();
    }
  }

  #refused(why?: string): ApiError {
    this.#rejectedRequests++;
    const detail = why ? ` (${why})` : '';
    return this.#tooMany(`too many requests in flight${detail}, please try again later`, 'inflight');
  }

  /** The 429 to throw; sendError writes its `Retry-After` header from the Status's retryAfterSeconds. */
  #tooMany(message: string, limit: LimitName): ApiError {
    return ApiError.tooManyRequests(message, this.#limits.retryAfterSeconds * 1000, limit);
  }
}

function bump(m: Map<string, number>, key: string, by: number): void {
  const n = (m.get(key) ?? 0) + by;
  if (n > 0) m.set(key, n);
  else m.delete(key);
}
