/**
 * Bounds on concurrent requests, as kube-apiserver's `--max-requests-inflight` is: a request over a bound is
 * answered `429 TooManyRequests` with `Retry-After` before it reads a byte of its body or touches the store.
 *
 * - Short requests (everything but watches and followed logs): at most `maxRequestsInflight` in total, and at
 *   most `maxRequestsInflightPerClient` of one client (the admin, one node, or anonymous for `/join`), so that a
 *   burst from one client cannot take every slot from the agents. The admin's (meshctl's and the control plane's
 *   own controllers') are not counted in the total, as kube-apiserver's in-flight limit exempts system:masters:
 *   when thousands of agents fill it, the controllers that mark their Nodes reachable and the admin's commands
 *   are not refused with them (at N = 5,000 both were); they stay bounded per client.
 * - Long-running requests (watches, `follow=true` logs): at most `maxWatchesPerClient` open per client.
 *
 * A slot is held until the response closes (finished, or the client went away).
 */
import type { ServerResponse } from 'node:http';
import { ApiError, type LimitName } from '../../meta/api-error.ts';

/** The bounds; `DEFAULT_INFLIGHT_LIMITS` says what each is when not given. */
export interface InflightLimits {
  maxRequestsInflight: number;
  maxRequestsInflightPerClient: number;
  maxWatchesPerClient: number;
  /** The `Retry-After` of a 429, in seconds. */
  retryAfterSeconds: number;
}

/** kube-apiserver's default of 400 in flight; a quarter of it per client; 100 open watches per client. */
export const DEFAULT_INFLIGHT_LIMITS: InflightLimits = {
  maxRequestsInflight: 400,
  maxRequestsInflightPerClient: 100,
  maxWatchesPerClient: 100,
  retryAfterSeconds: 1,
};

/** What `InflightLimiter.stats()` reports. */
export interface InflightStats {
  requestsInflight: number;
  watchesOpen: number;
  rejectedRequests: number;
  rejectedWatches: number;
}

/** Counts the requests in flight and refuses those over a bound. */
export class InflightLimiter {
  readonly #limits: InflightLimits;
  /** Short requests in flight, all of them (the stats). */
  #requests = 0;
  /** Those counted against maxRequestsInflight (not exempt). */
  #bounded = 0;
  #watches = 0;
  readonly #requestsBy = new Map<string, number>();
  readonly #watchesBy = new Map<string, number>();
  #rejectedRequests = 0;
  #rejectedWatches = 0;

  constructor(opts: { limits?: Partial<InflightLimits> } = {}) {
    this.#limits = { ...DEFAULT_INFLIGHT_LIMITS, ...opts.limits };
  }

  /**
   * Takes a slot for `res` (released when it closes), or sets `Retry-After` and throws 429. An `exempt` request
   * (the admin's) is bounded per client only, and not counted in the total.
   */
  admit(res: ServerResponse, client: string, longRunning: boolean, exempt = false): void {
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
      return;
    }
    if (
      (!exempt && this.#bounded >= l.maxRequestsInflight) ||
      (this.#requestsBy.get(client) ?? 0) >= l.maxRequestsInflightPerClient
    ) {
      this.#rejectedRequests++;
      throw this.#tooMany('too many requests in flight, please try again later', 'inflight');
    }
    const counted = exempt ? 0 : 1;
    this.#requests++;
    this.#bounded += counted;
    bump(this.#requestsBy, client, 1);
    res.once('close', () => {
      this.#requests--;
      this.#bounded -= counted;
      bump(this.#requestsBy, client, -1);
    });
  }

  stats(): InflightStats {
    return {
      requestsInflight: this.#requests,
      watchesOpen: this.#watches,
      rejectedRequests: this.#rejectedRequests,
      rejectedWatches: this.#rejectedWatches,
    };
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
