/**
 * A list's JSON serialized once and shared: concurrent GETs of the same list (kind, selectors, the store's
 * resourceVersion, and who asks, since a node sees its own view) are answered from one Buffer, so 1,000
 * concurrent lists of a 6 MB list hold one copy rather than 1,000 strings. Sockets keep a reference to the
 * Buffer they write, not a copy. An entry lives while a response that uses it is being sent, so the cache
 * holds only what is on the wire and any write (a new resourceVersion) starts a new entry.
 *
 * Writes between lists make each list a new entry, so the bytes of all entries are bounded too (`maxBytes`):
 * while they are over it, a list that would need a new serialization is answered 429 with `Retry-After`
 * (one being sent can still be shared, which costs nothing).
 */
import type { ServerResponse } from 'node:http';
import { ApiError } from '../../meta/api-error.ts';
import { sendJson } from '../http/respond.ts';
import { valueSink } from '../in-process-values.ts';

/** The default bound on the bytes of the lists being sent: 128 MiB. */
export const DEFAULT_MAX_LIST_BYTES = 128 * 1024 * 1024;

/** What `SharedLists.stats()` reports. */
export interface SharedListStats {
  /** Lists serialized (one per distinct list while it is being sent). */
  listSerializations: number;
  /** Lists answered with bytes another request had serialized. */
  listsShared: number;
  /** Bytes of the serialized lists being sent now. */
  listBytes: number;
}

interface Entry {
  bytes: Buffer;
  users: number;
}

/** The lists being sent, by key. */
export class SharedLists {
  readonly #entries = new Map<string, Entry>();
  readonly #maxBytes: number;
  #bytes = 0;
  #serializations = 0;
  #shared = 0;

  constructor(opts: { maxBytes?: number } = {}) {
    this.#maxBytes = opts.maxBytes ?? DEFAULT_MAX_LIST_BYTES;
  }

  /**
   * Sends the list of `key` as JSON, serializing it with `build` only when no response is sending it now;
   * throws 429 when that would take the lists being sent over `maxBytes`.
   */
  send(res: ServerResponse, key: string, build: () => unknown): void {
    if (res.headersSent || res.destroyed) return;
    // A client in this process (the controllers' informers) takes the list as it is: the store's own objects.
    if (valueSink(res)) return sendJson(res, 200, build());
    let entry = this.#entries.get(key);
    if (entry) this.#shared++;
    else {
      if (this.#bytes >= this.#maxBytes)
        throw ApiError.tooManyRequests('too many large lists are being sent; try again later', 1000, 'list_bytes');
      entry = { bytes: Buffer.from(JSON.stringify(build())), users: 0 };
      this.#entries.set(key, entry);
      this.#bytes += entry.bytes.length;
      this.#serializations++;
    }
    const e = entry;
    e.users++;
    res.once('close', () => {
      if (--e.users > 0 || this.#entries.get(key) !== e) return;
      this.#entries.delete(key);
      this.#bytes -= e.bytes.length;
    });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': e.bytes.length });
    res.end(e.bytes);
  }

  stats(): SharedListStats {
    return { listSerializations: this.#serializations, listsShared: this.#shared, listBytes: this.#bytes };
  }
}
