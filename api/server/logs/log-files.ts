/**
 * The control plane's service logs, kept as plain text files under its data directory — never in the
 * store: `<dir>/<node>/<service>.log`, one `<time> <line>` per line, where node and service names are
 * escaped (every byte outside `[A-Za-z0-9_-]` becomes `%XX`, so no name can leave its directory). A file
 * passing `maxFileBytes` is renamed to `<service>.log.1` (replacing the previous one) and started anew.
 * A node keeps logs of at most `maxServices` services: a POST naming more is refused whole (403) before
 * anything of it is written, so a node cannot fill the disk with files of invented services.
 *
 * Each node's writes run one at a time. The node's cursor (log-cursors.ts) keeps the last stored `seq` of
 * its stream, so a batch the agent sends again is stored once. Followers are told of every append; a
 * follower starts inside the node's queue, so it misses nothing and sees nothing twice.
 *
 * Durability of an acknowledged line: before the reply, its text and then the cursor are written (`write(2)`,
 * through kept-open descriptors: append-files.ts) — in the kernel's page cache, not fsync'd. So a crash or
 * SIGKILL of the control plane loses no acknowledged line and stores no re-sent batch twice; a power loss or
 * kernel crash can lose what the kernel had not yet written back (by default up to ~30 s of lines), and an
 * older cursor then can store a re-sent batch twice. This is the trade Kubernetes (container logs are written
 * without fsync) and journald (synced every 5 minutes) make. With an fsync of the lines and an atomic rewrite
 * of the cursor (two more fsyncs and a rename) per POST, 1,000 agents shipping every 30 s kept the libuv pool
 * at about 5% of a core, about what all their heartbeats cost.
 */
import { readdirSync, renameSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createKeyedSerial } from '../../meta/serial.ts';
import { ApiError } from '../../meta/api-error.ts';
import { isMissing } from '../../meta/errno.ts';
import { AppendFiles } from './append-files.ts';
import { LogCursors } from './log-cursors.ts';
import { readLog } from './log-tail.ts';
import type { LogPost, LogPostResult, ServiceLogInfo } from '../../wire/log-wire.ts';

/** Options of `LogFiles`. */
export interface LogFilesOptions {
  /** `DIR/logs` of the control plane. */
  dir: string;
  /** Size at which a service's file is rotated. Default 8 MiB. */
  maxFileBytes?: number;
  /** How many services' logs a node may keep. Default MAX_SERVICES_PER_NODE. */
  maxServices?: number;
  /** How many files are kept open for appending. Default 256. */
  maxOpenFiles?: number;
  /** Size past which a node's cursor file is compacted (log-cursors.ts). */
  maxCursorBytes?: number;
}

/** How many services' log files a node may have by default. */
export const MAX_SERVICES_PER_NODE = 64;

/** Called with stored text (whole `<time> <line>\n` lines) as it is appended. */
export type LogListener = (text: string) => void;

/** The escaped form of a node or service name (a file name that cannot be `.`, `..` or contain `/`). */
export function escapeName(name: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(name)) return name;
  return Array.from(Buffer.from(name, 'utf8'), (b) => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9_-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
}

function unescapeName(file: string): string | undefined {
  const m = /^([A-Za-z0-9_%-]+)\.log$/.exec(file);
  try {
    return m ? decodeURIComponent(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The stored service logs of every node (see the module comment). */
export class LogFiles {
  readonly #dir: string;
  readonly #max: number;
  readonly #maxServices: number;
  /** One lane per node: a node's appends and reads never interleave; nodes do not wait for each other. */
  readonly #serial = createKeyedSerial();
  readonly #files: AppendFiles;
  readonly #cursors: LogCursors;
  /** By node: the services it has log files of. */
  readonly #known = new Map<string, Set<string>>();
  readonly #listeners = new Map<string, Set<LogListener>>();

  constructor(opts: LogFilesOptions) {
    this.#dir = opts.dir;
    this.#max = opts.maxFileBytes ?? 8 * 1024 * 1024;
    this.#maxServices = opts.maxServices ?? MAX_SERVICES_PER_NODE;
    this.#files = new AppendFiles({ maxOpen: opts.maxOpenFiles ?? 256 });
    this.#cursors = new LogCursors({
      files: this.#files,
      ...(opts.maxCursorBytes !== undefined ? { maxBytes: opts.maxCursorBytes } : {}),
    });
  }

  /** Closes the files kept open for appending (a later append reopens them). */
  close(): void {
    this.#files.close();
  }

  /** How many files are open for appending (for tests). */
  openFiles(): number {
    return this.#files.openCount;
  }

  /** The file of a node's service. */
  path(node: string, service: string): string {
    return join(this.#dir, escapeName(node), `${escapeName(service)}.log`);
  }

  /** Stores a POST's lines (skipping those already stored) and tells followers. */
  append(node: string, post: LogPost): Promise<LogPostResult> {
    return this.#serial(node, async () => {
      const nodeDir = join(this.#dir, escapeName(node));
      const cursor = this.#cursors.get(nodeDir);
      const fresh = post.entries.filter(
        (e) => !(post.stream && cursor?.stream === post.stream && e.seq !== undefined && e.seq <= cursor.seq),
      );
      const texts = new Map<string, string>();
      const add = (service: string, text: string): void => void texts.set(service, (texts.get(service) ?? '') + text);
      if (fresh.length > 0 || post.entries.length === 0) {
        const now = new Date().toISOString();
        for (const d of post.dropped ?? []) {
          if (d.lines > 0)
            add(
              d.service,
              `${now} [meshctl] the node dropped ${d.lines} line(s) (${d.bytes} bytes) of this log here: its log buffer was full while the control plane was unreachable\n`,
            );
        }
      }
      for (const e of fresh) add(e.service, `${e.time} ${e.line}\n`);
      this.#checkServiceCount(node, [...texts.keys()]);
      for (const [service, text] of texts) this.#write(node, service, text);
      const last = fresh.length ? fresh[fresh.length - 1].seq : undefined;
      if (post.stream && last !== undefined) await this.#cursors.set(nodeDir, { stream: post.stream, seq: last });
      return { accepted: fresh.length, duplicates: post.entries.length - fresh.length };
    });
  }

  /** The services of `node` that have logs. */
  async list(node: string): Promise<ServiceLogInfo[]> {
    let names: string[];
    try {
      names = await readdir(join(this.#dir, escapeName(node)));
    } catch (e) {
      if (isMissing(e)) return [];
      throw e;
    }
    const out: ServiceLogInfo[] = [];
    for (const name of names.sort()) {
      const service = unescapeName(name);
      if (service === undefined) continue;
      const st = await stat(join(this.#dir, escapeName(node), name));
      const older = await stat(join(this.#dir, escapeName(node), `${name}.1`)).catch(() => undefined);
      out.push({ service, bytes: st.size + (older?.size ?? 0), lastWriteTime: st.mtime.toISOString() });
    }
    return out;
  }

  /** Whether `service` of `node` has logs. */
  async has(node: string, service: string): Promise<boolean> {
    return stat(this.path(node, service)).then(
      () => true,
      () => false,
    );
  }

  /** The stored text of a service's log (all of it, or the last `tailLines` lines). */
  read(node: string, service: string, tailLines?: number): Promise<string> {
    return readLog(this.path(node, service), tailLines);
  }

  /**
   * Sends the stored text (all, or the last `tailLines` lines) to `listener`, then every append after it.
   * Resolves with the function that stops following.
   */
  follow(node: string, service: string, tailLines: number | undefined, listener: LogListener): Promise<() => void> {
    return this.#serial(node, async () => {
      listener(await this.read(node, service, tailLines));
      const key = this.path(node, service);
      const set = this.#listeners.get(key) ?? new Set<LogListener>();
      this.#listeners.set(key, set.add(listener));
      return () => {
        set.delete(listener);
        if (set.size === 0 && this.#listeners.get(key) === set) this.#listeners.delete(key);
      };
    });
  }

  /** How many followers there are (for tests and logs). */
  followers(): number {
    let n = 0;
    for (const s of this.#listeners.values()) n += s.size;
    return n;
  }

  /** Throws 403 when writing logs of `services` would give `node` more than `maxServices` services. */
  #checkServiceCount(node: string, services: string[]): void {
    const known = this.#services(node);
    const added = services.filter((s) => !known.has(s)).length;
    if (added === 0 || known.size + added <= this.#maxServices) return;
    throw new ApiError({
      reason: 'Forbidden',
      message:
        `node "${node}" may keep logs of at most ${this.#maxServices} services; it has ${known.size} ` +
        `and this request names ${added} more: the request was refused and nothing of it stored`,
      details: { name: node, kind: 'logs' },
    });
  }

  /**
   * The services `node` has log files of (read once per node, then kept up to date by `#write`). Read
   * synchronously, as the cursor is (log-cursors.ts): one directory of a few files, once per node.
   */
  #services(node: string): Set<string> {
    let set = this.#known.get(node);
    if (set) return set;
    let names: string[];
    try {
      names = readdirSync(join(this.#dir, escapeName(node)));
    } catch (e) {
      if (!isMissing(e)) throw e;
      names = [];
    }
    set = new Set(names.map(unescapeName).filter((n) => n !== undefined));
    this.#known.set(node, set);
    return set;
  }

  /** Appends `text` to a service's file, rotating it first when the text would take it past the cap. */
  #write(node: string, service: string, text: string): void {
    const path = this.path(node, service);
    const data = Buffer.from(text, 'utf8');
    const size = this.#files.size(path);
    if (size > 0 && size + data.length > this.#max) {
      this.#files.forget(path);
      renameSync(path, `${path}.1`);
    }
    this.#files.append(path, data);
    this.#known.get(node)?.add(service);
    for (const l of this.#listeners.get(path) ?? []) l(text);
  }
}
