/**
 * The initial events of unfiltered watches from resourceVersion 0, encoded once and shared. A thousand
 * informers starting at once against 10,000 objects would otherwise each queue 10,000 event lines on their
 * socket (the issue-9 storm took the control plane to 2–3 GiB); here they share one snapshot per kind: the
 * `{"type":"ADDED","object":…}` lines of every object at one durable resourceVersion, packed into Buffers of
 * about 64 KiB that a server writes one at a time as each client drains (a socket keeps a reference to a
 * Buffer, not a copy). The watch then resumes from the snapshot's resourceVersion through the event log.
 *
 * A snapshot is reused while the event log holds few enough events after it (`maxLag`), so watches that
 * arrive during a stream of writes still share one; older, a new one is built. Only durable state is served:
 * a snapshot is encoded once the store's durable resourceVersion has reached the one it was listed at (a
 * crash may lose a write that is readable but not durable, and the fence then makes its number invalid).
 * The newest snapshot of a kind is held weakly: it lives while some watch is still sending it.
 */
import type { KubeObject } from '../meta/types.ts';
import { StoreEvent } from './store-event.ts';

/** A kind's initial watch events at one durable resourceVersion, as wire bytes (see the file comment). */
export interface WatchSnapshot {
  /** The durable resourceVersion the objects are listed at: the watch goes on with the events after it. */
  readonly resourceVersion: string;
  /** The ADDED lines, newline-terminated, whole lines per Buffer. */
  readonly chunks: readonly Buffer[];
  readonly objects: number;
  readonly bytes: number;
}

/** What `WatchSnapshots.stats()` reports. */
export interface WatchSnapshotStats {
  /** Snapshots encoded. */
  built: number;
  /** Watches served a snapshot another watch had asked for. */
  shared: number;
}

/** Options of the WatchSnapshots constructor. */
export interface WatchSnapshotsOptions {
  /** Lists every object of a kind, with the store's resourceVersion (durable or not). */
  list: (plural: string) => { items: KubeObject[]; resourceVersion: string };
  /** Resolves once every write up to `rv` is durable. */
  whenDurable: (rv: number) => Promise<void>;
  /** How many events after `rv` the event log holds; undefined when a watch can no longer resume from `rv`. */
  eventsAfter: (rv: number) => number | undefined;
  /** Reuse a snapshot while at most this many events came after it. */
  maxLag: number;
  /** The size a chunk is filled to (default 64 KiB). */
  chunkBytes?: number;
}

interface Entry {
  rv: number;
  pending?: Promise<WatchSnapshot>;
  done?: WeakRef<WatchSnapshot>;
}

/** The shared snapshots, one (the newest) per kind (see the file comment). */
export class WatchSnapshots {
  readonly #opts: WatchSnapshotsOptions;
  readonly #entries = new Map<string, Entry>();
  #built = 0;
  #shared = 0;

  constructor(opts: WatchSnapshotsOptions) {
    this.#opts = opts;
  }

  /** The snapshot a new unfiltered watch of `plural` from resourceVersion 0 is sent first. */
  get(plural: string): Promise<WatchSnapshot> {
    const entry = this.#entries.get(plural);
    const lag = entry && this.#opts.eventsAfter(entry.rv);
    if (entry && lag !== undefined && lag <= this.#opts.maxLag) {
      const ready = entry.pending ?? entry.done?.deref();
      if (ready) {
        this.#shared++;
        return Promise.resolve(ready);
      }
    }
    return this.#build(plural);
  }

  stats(): WatchSnapshotStats {
    return { built: this.#built, shared: this.#shared };
  }

  #build(plural: string): Promise<WatchSnapshot> {
    const { items, resourceVersion } = this.#opts.list(plural);
    const entry: Entry = { rv: Number(resourceVersion) };
    entry.pending = this.#opts.whenDurable(entry.rv).then(() => {
      const snapshot = encodeSnapshot(plural, items, resourceVersion, this.#opts.chunkBytes ?? 64 * 1024);
      this.#built++;
      entry.pending = undefined;
      entry.done = new WeakRef(snapshot);
      return snapshot;
    });
    this.#entries.set(plural, entry);
    return entry.pending;
  }
}

/** Packs the ADDED lines of `items` into Buffers of about `chunkBytes` (a line is never split). */
export function encodeSnapshot(
  plural: string,
  items: readonly KubeObject[],
  resourceVersion: string,
  chunkBytes: number,
): WatchSnapshot {
  const chunks: Buffer[] = [];
  let parts: string[] = [];
  let size = 0;
  let bytes = 0;
  const flush = (): void => {
    const chunk = Buffer.from(parts.join(''));
    chunks.push(chunk);
    bytes += chunk.length;
    parts = [];
    size = 0;
  };
  for (const object of items) {
    const rv = Number(object.metadata.resourceVersion);
    const line = new StoreEvent({ type: 'ADDED', object, plural, rv }).json + '\n';
    parts.push(line);
    size += line.length;
    if (size >= chunkBytes) flush();
  }
  if (parts.length > 0) flush();
  return { resourceVersion, chunks, objects: items.length, bytes };
}
