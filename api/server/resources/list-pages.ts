/**
 * Pagination of lists (`?limit=N&continue=TOKEN`) with Kubernetes semantics: pages in name order, every page of
 * one list served at the resourceVersion of its first page. The store keeps no old versions of objects, so the
 * first page of a list that has more pages keeps its sorted result (references to the store's read-only
 * objects, not copies) for a short TTL, keyed by who asks, the kind, the selectors and the resourceVersion; a
 * continue token names that snapshot and the last name served. Once the snapshot is gone (TTL, or evicted when
 * more than `maxEntries` lists are being paged), a token of an older resourceVersion is a 410 Expired, as
 * kube-apiserver answers when etcd has compacted it.
 */
import { ApiError } from '../../meta/api-error.ts';
import type { Clock } from '../../meta/clock.ts';
import { realClock } from '../../meta/clock.ts';
import type { KubeObject } from '../../meta/types.ts';

/** How long a list's snapshot is kept for its next pages by default: 5 minutes (kube compacts every 5). */
export const DEFAULT_PAGE_TTL_MS = 5 * 60_000;
/** How many lists' snapshots are kept at most by default. */
export const DEFAULT_MAX_PAGED_LISTS = 64;
/** How many items all kept snapshots may hold together by default (references to shared objects, 8 bytes each). */
export const DEFAULT_MAX_PAGED_ITEMS = 1_000_000;
/** kube-apiserver's message for a continue token whose resourceVersion is gone. */
export const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';

/** Options of `ListPages`. */
export interface ListPagesOptions {
  ttlMs?: number;
  maxEntries?: number;
  /** Bound on the items of all kept snapshots together; the oldest go first. */
  maxItems?: number;
  clock?: Clock;
}

/** What a list is: who asks, the kind, the selectors (the snapshot key without the resourceVersion). */
export type ListIdentity = readonly unknown[];

/** One page and what follows it. */
export interface Page {
  items: KubeObject[];
  resourceVersion: string;
  /** The token of the next page, when more remain. */
  continue?: string;
  remainingItemCount?: number;
}

/** What a continue token carries. */
interface Token {
  rv: string;
  start: string;
}

interface Snapshot {
  items: KubeObject[];
  expires: number;
}

/** Reads `limit`: absent, or a positive integer (else 400). */
export function limitParam(query: URLSearchParams): number | undefined {
  const v = query.get('limit');
  if (v === null || v === '') return undefined;
  if (!/^[0-9]+$/.test(v) || Number(v) < 1 || !Number.isSafeInteger(Number(v)))
    throw ApiError.badRequest(`limit must be a positive integer, not ${JSON.stringify(v)}`);
  return Number(v);
}

/** Decodes a continue token (base64url JSON of the resourceVersion and the last name served); 400 when malformed. */
export function decodeContinue(token: string): Token {
  let t: unknown;
  try {
    t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    t = undefined;
  }
  const o = (t ?? {}) as Partial<Record<keyof Token, unknown>>;
  if (typeof o.rv !== 'string' || !/^[1-9][0-9]*$/.test(o.rv) || typeof o.start !== 'string' || !o.start)
    throw ApiError.badRequest('continue key is not valid: a continue token must come from a previous list response');
  return { rv: o.rv, start: o.start };
}

/** Encodes a continue token. */
export function encodeContinue(t: Token): string {
  return Buffer.from(JSON.stringify({ rv: t.rv, start: t.start })).toString('base64url');
}

/** The snapshots of lists being paged, bounded in count and time. */
export class ListPages {
  readonly #snapshots = new Map<string, Snapshot>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #maxItems: number;
  #items = 0;
  readonly #clock: Clock;

  constructor(opts: ListPagesOptions = {}) {
    this.#ttlMs = opts.ttlMs ?? DEFAULT_PAGE_TTL_MS;
    this.#maxEntries = opts.maxEntries ?? DEFAULT_MAX_PAGED_LISTS;
    this.#maxItems = opts.maxItems ?? DEFAULT_MAX_PAGED_ITEMS;
    this.#clock = opts.clock ?? realClock;
  }

  /**
   * The page of `id` after `token` (or the first page), at most `limit` items. `current` lists the matching
   * objects now (sorted by name); it is called for a first page, or when the token's resourceVersion is still the
   * store's (`storeRv`) but its snapshot is gone. Throws 410 Expired when the token's snapshot is gone.
   */
  page(
    id: ListIdentity,
    opts: { limit?: number; token?: string; storeRv: string },
    current: () => { items: KubeObject[]; resourceVersion: string },
  ): Page {
    this.#sweep();
    const t = opts.token !== undefined ? decodeContinue(opts.token) : undefined;
    let items: KubeObject[];
    let rv: string;
    if (t) {
      const snap = this.#snapshots.get(key(id, t.rv));
      if (snap) [items, rv] = [snap.items, t.rv];
      else if (t.rv === opts.storeRv) [items, rv] = [current().items, t.rv];
      else throw ApiError.gone(CONTINUE_EXPIRED_MESSAGE);
    } else ({ items, resourceVersion: rv } = current());
    const from = t ? firstAfter(items, t.start) : 0;
    const end = opts.limit === undefined ? items.length : Math.min(items.length, from + opts.limit);
    const page = items.slice(from, end);
    if (end >= items.length) return { items: page, resourceVersion: rv };
    this.#keep(key(id, rv), items);
    const start = page[page.length - 1].metadata.name ?? '';
    return {
      items: page,
      resourceVersion: rv,
      continue: encodeContinue({ rv, start }),
      remainingItemCount: items.length - end,
    };
  }

  /** How many lists' snapshots are kept now (for tests). */
  get size(): number {
    return this.#snapshots.size;
  }

  #keep(k: string, items: KubeObject[]): void {
    this.#drop(k);
    this.#snapshots.set(k, { items, expires: this.#clock.now() + this.#ttlMs });
    this.#items += items.length;
    while (this.#snapshots.size > this.#maxEntries || (this.#items > this.#maxItems && this.#snapshots.size > 1))
      this.#drop(this.#snapshots.keys().next().value!);
  }

  #drop(k: string): void {
    const s = this.#snapshots.get(k);
    if (!s) return;
    this.#snapshots.delete(k);
    this.#items -= s.items.length;
  }

  #sweep(): void {
    const now = this.#clock.now();
    for (const [k, s] of this.#snapshots) if (s.expires <= now) this.#drop(k);
  }
}

function key(id: ListIdentity, rv: string): string {
  return JSON.stringify([...id, rv]);
}

/** The index of the first item whose name sorts after `name` (items are sorted by name). */
function firstAfter(items: KubeObject[], name: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((items[mid].metadata.name ?? '') <= name) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
