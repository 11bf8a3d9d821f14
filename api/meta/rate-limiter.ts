/**
 * Token buckets by key, on an injectable clock: each key may take `burst` at once, then `perMinute` a
 * minute. A key whose bucket is full again holds no memory once the map passes `maxKeys`, so keys chosen
 * by a client (source addresses) cannot grow it without bound.
 */
import type { Clock } from './clock.ts';

/** Options of a `RateLimiter`. */
export interface RateLimiterOptions {
  /** Tokens added per minute. */
  perMinute: number;
  /** The most tokens a key can hold (what it may take at once). */
  burst: number;
  clock: Clock;
  /** How many keys are remembered before full buckets are forgotten (default 10 000). */
  maxKeys?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** A token bucket per key (see the module comment). */
export class RateLimiter {
  readonly #opts: Required<RateLimiterOptions>;
  readonly #buckets = new Map<string, Bucket>();

  constructor(opts: RateLimiterOptions) {
    this.#opts = { maxKeys: 10_000, ...opts };
  }

  /** Takes one token of `key`: undefined when taken, else the ms until one is available (nothing is taken). */
  take(key: string): number | undefined {
    const now = this.#opts.clock.now();
    const b = this.#refill(key, now);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    return Math.ceil(((1 - b.tokens) * 60_000) / this.#opts.perMinute);
  }

  #refill(key: string, now: number): Bucket {
    const { perMinute, burst } = this.#opts;
    const b = this.#buckets.get(key);
    if (!b) {
      this.#forgetFull(now);
      const fresh = { tokens: burst, at: now };
      this.#buckets.set(key, fresh);
      return fresh;
    }
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) * perMinute) / 60_000);
    b.at = now;
    return b;
  }

  /** Past `maxKeys`, forgets the buckets that are full again (forgetting one changes nothing), oldest first. */
  #forgetFull(now: number): void {
    if (this.#buckets.size < this.#opts.maxKeys) return;
    const { perMinute, burst } = this.#opts;
    for (const [key, b] of this.#buckets) {
      if (b.tokens + ((now - b.at) * perMinute) / 60_000 >= burst) this.#buckets.delete(key);
    }
    // Every key is still limited: forget the oldest, which lets it start anew with a full bucket.
    if (this.#buckets.size >= this.#opts.maxKeys) this.#buckets.delete(this.#buckets.keys().next().value!);
  }
}
