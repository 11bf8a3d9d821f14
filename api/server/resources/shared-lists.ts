/**
 * A list's JSON serialized once and shared: concurrent GETs of the same list (kind, selectors, the store's
 * resourceVersion, and who asks, since a node sees its own view) are answered from one Buffer, so 1,000
 * concurrent lists of a 6 MB list hold one copy rather than 1,000 strings. Sockets keep a reference to the
 * Buffer they write, not a copy. An entry lives while a response that uses it is being sent, so the cache
 * holds only what is on the wire and any write (a new resourceVersion) starts a new entry.
 */
import type { ServerResponse } from 'node:http';

/** What `SharedLists.stats()` reports. */
export interface SharedListStats {
  /** Lists serialized (one per distinct list while it is being sent). */
  listSerializations: number;
  /** Lists answered with bytes another request had serialized. */
  listsShared: number;
}

interface Entry {
  bytes: Buffer;
  users: number;
}

/** The lists being sent, by key. */
export class SharedLists {
  readonly #entries = new Map<string, Entry>();
  #serializations = 0;
  #shared = 0;

  /** Sends the list of `key` as JSON, serializing it with `build` only when no response is sending it now. */
  send(res: ServerResponse, key: string, build: () => unknown): void {
    if (res.headersSent || res.destroyed) return;
    let entry = this.#entries.get(key);
    if (entry) this.#shared++;
    else {
      entry = { bytes: Buffer.from(JSON.stringify(build())), users: 0 };
      this.#entries.set(key, entry);
      this.#serializations++;
    }
    const e = entry;
    e.users++;
    res.once('close', () => {
      if (--e.users === 0 && this.#entries.get(key) === e) this.#entries.delete(key);
    });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': e.bytes.length });
    res.end(e.bytes);
  }

  stats(): SharedListStats {
    return { listSerializations: this.#serializations, listsShared: this.#shared };
  }
}
