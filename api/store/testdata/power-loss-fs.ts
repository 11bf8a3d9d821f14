/**
 * A `StoreFs` that simulates power loss, for the store's crash tests. Every call really happens on disk (the
 * disk plays the page cache, so the store reads back what it wrote), and the layer keeps what a power cut
 * would leave: each file's content as of its last successful fdatasync (by inode, so renames carry it), and
 * each directory's entries as of its last successful fsync. `powerLoss()` stops the store dead (no call
 * settles any more, so nothing more is acknowledged), waits for the calls in flight, and rebuilds the
 * directory from those durable copies — the worst a real cut may do: everything since the last sync is
 * gone. A file whose entry is durable but whose data never was comes back empty.
 */
import { fstatSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeStoreFs, type StoreFs } from '../store-fs.ts';

/** Files the layer leaves out of the durable copy: the lock's owner dies with the power. */
const UNTRACKED = /^LOCK/;

/** The power-loss simulation over one store directory (see the file comment). */
export class PowerLossFs implements StoreFs {
  readonly #dir: string;
  /** inode → content at its last fdatasync. */
  readonly #data = new Map<number, Buffer>();
  /** name → inode, as of the directory's last fsync. */
  #entries = new Map<string, number>();
  readonly #inflight = new Set<Promise<unknown>>();
  #dead = false;

  /** Takes what is in `dir` now as durable (a freshly rebuilt or closed store). */
  constructor(dir: string) {
    this.#dir = dir;
    this.#entries = this.#list();
    for (const [name, ino] of this.#entries) this.#data.set(ino, readFileSync(join(dir, name)));
  }

  open(path: string, flags: string): Promise<number> {
    return this.#call(async () => {
      const fd = await nodeStoreFs.open(path, flags);
      // A new file (or a reused inode number) holds nothing durable until its first fdatasync.
      const ino = fstatSync(fd).ino;
      if (![...this.#entries.values()].includes(ino)) this.#data.set(ino, Buffer.alloc(0));
      return fd;
    });
  }
  write(fd: number, buf: Buffer): Promise<void> {
    return this.#call(() => nodeStoreFs.write(fd, buf));
  }
  close(fd: number): Promise<void> {
    return this.#call(() => nodeStoreFs.close(fd));
  }
  rename(from: string, to: string): Promise<void> {
    return this.#call(() => nodeStoreFs.rename(from, to));
  }
  unlink(path: string): Promise<void> {
    return this.#call(() => nodeStoreFs.unlink(path));
  }
  remove(path: string): Promise<void> {
    return this.#call(() => nodeStoreFs.remove(path));
  }

  dataSync(fd: number): Promise<void> {
    const ino = fstatSync(fd).ino;
    const content = readFileSync(`/proc/self/fd/${fd}`); // what the sync covers: the content at the call
    return this.#call(async () => {
      await nodeStoreFs.dataSync(fd);
      this.#data.set(ino, content);
    });
  }

  truncate(path: string, size: number): Promise<void> {
    return this.#call(async () => {
      await nodeStoreFs.truncate(path, size);
      this.#data.set(statSync(path).ino, readFileSync(path));
    });
  }

  fsyncDir(dir: string): Promise<void> {
    if (dir !== this.#dir) return Promise.reject(new Error(`PowerLossFs covers ${this.#dir}, not ${dir}`));
    const entries = this.#list();
    return this.#call(async () => {
      await nodeStoreFs.fsyncDir(dir);
      this.#entries = entries;
    });
  }

  /** Cuts the power: the store using this layer never hears back again; the directory keeps only what was durable. */
  async powerLoss(): Promise<void> {
    this.#dead = true;
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
    for (const name of readdirSync(this.#dir)) rmSync(join(this.#dir, name), { force: true });
    for (const [name, ino] of this.#entries) writeFileSync(join(this.#dir, name), this.#data.get(ino) ?? '');
  }

  /** Runs a real call unless the power is out; a call after the cut (or settling after it) never settles. */
  #call<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#dead) return new Promise<T>(() => {});
    const p = fn();
    this.#inflight.add(p);
    return new Promise<T>((resolve, reject) => {
      p.then(
        (v) => {
          this.#inflight.delete(p);
          if (!this.#dead) resolve(v);
        },
        (e: unknown) => {
          this.#inflight.delete(p);
          if (!this.#dead) reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
  }

  #list(): Map<string, number> {
    const entries = new Map<string, number>();
    for (const name of readdirSync(this.#dir)) {
      if (UNTRACKED.test(name)) continue;
      const ino = statSync(join(this.#dir, name), { throwIfNoEntry: false })?.ino; // gone meanwhile: not an entry
      if (ino !== undefined) entries.set(name, ino);
    }
    return entries;
  }
}
