/**
 * The lowdb Adapter that makes the store durable without rewriting it: lowdb's `write(data)` contract
 * ("persist db.data") kept by appending only what changed.
 *
 * Layering: lowdb's `Low<StoreData>` holds the whole state in memory (`db.data`). The store changes
 * `db.data.kinds` in place and, in the same synchronous step, stages the operation's journal line in
 * `db.data.unjournaled`; it then calls `db.write()`, which is lowdb calling this adapter's `write(data)`.
 * `write` persists exactly what changed since the previous write — it drains `data.unjournaled` into the
 * group-commit journal — and resolves once those lines are fdatasync'd. Concurrent `db.write()` calls share
 * one write + fdatasync. `read()` is lowdb's load: the latest snapshot plus the journal segments replayed on top.
 *
 * Compaction runs off the request path: once the journal has grown by `compactAfterBytes` since the last
 * snapshot (after a failure, 5 s later at the earliest), the adapter copies the kind maps (objects are
 * immutable, so a shallow copy is a consistent snapshot at `data.rv`), rotates the journal (writes continue
 * into a new segment), writes the snapshot in chunks that yield to the event loop — and wait, for up to 30 s in
 * all, while requests keep the loop busy (idle-pacer.ts) — renames it into place, then removes the segments older
 * than the rotation.
 *
 * `close()` ends the journal with a `closed` mark, so the next open knows no served write can have been lost
 * (`crashed` is false); after a crash the store fences its resourceVersions (index.ts).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Adapter } from 'lowdb';
import { Journal, listSegments } from './journal.ts';
import { replayJournal } from './journal-replay.ts';
import { idlePacer, type IdlePacerOptions } from './idle-pacer.ts';
import { readSnapshot, writeSnapshot } from './snapshot.ts';
import { emptyData, markLine, type Kinds, type StoreData } from './store-data.ts';
import type { StoreFs } from './store-fs.ts';
import type { StoreLogger } from './store-log.ts';

/** Options of the JournalAdapter constructor. */
export interface JournalAdapterOptions {
  dir: string;
  /** The file-system calls that write (node:fs, or a test's power-loss simulation). */
  fs: StoreFs;
  /** Start a compaction when the journal has grown by this many bytes since the last snapshot. */
  compactAfterBytes: number;
  /** How a compaction's snapshot gives way to a busy event loop (idle-pacer.ts; defaults there). */
  pace?: IdlePacerOptions;
  logger: StoreLogger;
  /** Called with the newest durable resourceVersion after each group commit (must not throw). */
  onDurable: (rv: number) => void;
}

/** What the adapter reports in `Store.stats()`. */
export interface JournalStats {
  segments: number;
  segmentBytes: number;
  bytes: number;
  commits: number;
  lines: number;
  compactions: number;
  compacting: boolean;
  lastCompaction?: { rv: number; objects: number; bytes: number; ms: number; waitedMs: number };
}

const RETRY_MS = 5_000;

function copyKinds(kinds: Kinds): { kinds: Kinds; objects: number } {
  const copy: Kinds = new Map();
  let objects = 0;
  for (const [plural, kind] of kinds) {
    copy.set(plural, new Map(kind));
    objects += kind.size;
  }
  return { kinds: copy, objects };
}

/** The durable lowdb adapter (see the file comment). */
export class JournalAdapter implements Adapter<StoreData> {
  readonly #opts: JournalAdapterOptions;
  #journal?: Journal;
  #data?: StoreData;
  #segments = 0;
  #compaction?: Promise<void>;
  #closing = false;
  #compactions = 0;
  #last?: JournalStats['lastCompaction'];
  /** Journal bytes covered by the latest snapshot (approximately: measured at the cut). */
  #compactedBytes = 0;
  /** After a failed compaction, the next one waits until then (ms since epoch). */
  #notBefore = 0;

  /**
   * Set by `read()`: the store was used before and its last process did not close it cleanly, so a write it
   * served may have been lost (a brand-new directory, without journal or snapshot, did not crash).
   */
  crashed = false;
  /** The journal's size when it was opened, if it then ended with the `closed` mark (see close()). */
  #closedAtBytes: number | undefined;

  constructor(opts: JournalAdapterOptions) {
    this.#opts = opts;
  }

  /** Loads the snapshot, replays the journal, and opens the newest segment for appending. */
  async read(): Promise<StoreData> {
    const { dir, logger, fs } = this.#opts;
    await fs.remove(join(dir, 'snapshot.jsonl.tmp'));
    const snap = await readSnapshot(dir, fs);
    const data = emptyData();
    if (snap) {
      data.rv = snap.rv;
      data.kinds = snap.kinds;
    }
    const replay = await replayJournal(dir, data, snap?.rv ?? 0, logger, fs);
    this.crashed = !replay.closedCleanly && (replay.segments > 0 || snap !== undefined);
    if (replay.closedCleanly) this.#closedAtBytes = replay.bytes;
    this.#segments = Math.max(replay.segments, 1);
    this.#journal = await Journal.open({
      dir,
      fs,
      seq: replay.newest?.seq ?? 1,
      size: replay.newest?.size ?? 0,
      totalSize: replay.bytes,
      onDurable: this.#opts.onDurable,
    });
    logger({
      msg: 'Opened store',
      dir,
      rv: data.rv,
      snapshotRv: snap?.rv ?? 0,
      segments: replay.segments,
      journalBytes: replay.bytes,
      closedCleanly: !this.crashed,
    });
    this.#data = data;
    return data;
  }

  /** Persists the operations staged in `data.unjournaled` (and only those); resolves once they are durable. */
  write(data: StoreData): Promise<void> {
    const journal = this.#journal;
    if (!journal) return Promise.reject(new Error('the store adapter was not read (opened) first'));
    const staged = data.unjournaled;
    if (staged.length === 0) return journal.flushed();
    data.unjournaled = [];
    let durable: Promise<void> = Promise.resolve();
    for (const e of staged) durable = journal.append(e.line, e.rv);
    this.#maybeCompact(data, journal);
    return durable;
  }

  /** Aborts a running compaction, flushes the journal, ends it with the `closed` mark and closes it. */
  async close(): Promise<void> {
    this.#closing = true;
    await this.#compaction;
    const journal = this.#journal;
    const data = this.#data;
    if (!journal) return;
    if (data) {
      // A failed journal writes no mark: the next open then treats the store as crashed, which is safe. A store
      // opened and closed without a write (e.g. a refused `meshctl init`) already ends with the mark: left as is.
      await this.write(data)
        .then(() =>
          journal.bytes === this.#closedAtBytes ? undefined : journal.append(markLine(data.rv, 'closed'), data.rv),
        )
        .catch(() => {});
    }
    await journal.close();
  }

  stats(): JournalStats {
    const j = this.#journal;
    return {
      segments: this.#segments,
      segmentBytes: j?.segmentBytes ?? 0,
      bytes: j?.bytes ?? 0,
      commits: j?.commits ?? 0,
      lines: j?.lines ?? 0,
      compactions: this.#compactions,
      compacting: this.#compaction !== undefined,
      lastCompaction: this.#last,
    };
  }

  #maybeCompact(data: StoreData, journal: Journal): void {
    if (this.#compaction || this.#closing || Date.now() < this.#notBefore) return;
    if (journal.bytes - this.#compactedBytes < this.#opts.compactAfterBytes) return;
    this.#compaction = this.#compact(data, journal)
      .catch((e: unknown) => {
        const error = e instanceof Error ? e.message : String(e);
        if (this.#closing) return this.#opts.logger({ msg: 'Aborted compaction (closing)', error });
        this.#notBefore = Date.now() + RETRY_MS;
        this.#opts.logger({ msg: 'Compaction failed', level: 'error', error, retryInMs: RETRY_MS });
      })
      .finally(() => {
        this.#compaction = undefined;
      });
  }

  async #compact(data: StoreData, journal: Journal): Promise<void> {
    const started = performance.now();
    const rv = data.rv;
    const { kinds, objects } = copyKinds(data.kinds); // the cut: the state at rv, taken synchronously
    const cutBytes = journal.bytes;
    this.#opts.logger({ msg: 'Started compaction', rv, objects });
    // Records ≤ rv are all appended already: wait until they are durable and later ones go to a new segment.
    const [seq] = await Promise.all([journal.rotate(), journal.flushed()]);
    const { dir, fs } = this.#opts;
    const pace = idlePacer(this.#opts.pace);
    const bytes = await writeSnapshot({ dir, fs, snapshot: { rv, kinds }, aborted: () => this.#closing, pace });
    const old = listSegments(dir).filter((s) => s.seq < seq);
    for (const s of old) await fs.unlink(s.file);
    await fs.fsyncDir(dir);
    this.#segments = listSegments(this.#opts.dir).length;
    this.#compactions++;
    this.#compactedBytes = cutBytes;
    this.#last = { rv, objects, bytes, ms: Math.round(performance.now() - started), ...pace.stats() };
    this.#opts.logger({ msg: 'Compacted store', ...this.#last, segmentsRemoved: old.length });
  }
}
