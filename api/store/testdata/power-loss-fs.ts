/**
 * A `StoreFs` that simulates power loss, for the store's crash tests. Every call really happens on disk (the
 * disk plays the page cache, so the store reads back what it wrote), and the layer keeps what a power cut
 * would leave in a DurableImage (durable-image.ts): each file's content as of its last successful fdatasync,
 * and each directory's entries as of its last successful fsync. `powerLoss()` stops the store dead (no call
 * settles any more, so nothing more is acknowledged), waits for the calls in flight, and rebuilds the
 * directory from the image — the worst a real cut may do: everything since the last sync is gone. The image
 * is kept in files, so a test may instead SIGKILL the process writing through this layer and then cut the
 * power itself (`restoreDurableImage`).
 */
import { fstatSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeStoreFs, type StoreFs } from '../store-fs.ts';
import { DurableImage, listEntries } from './durable-image.ts';

/** Options of the PowerLossFs constructor. */
export interface PowerLossFsOptions {
  /** Where the durable image is kept (default a temp directory, removed by `powerLoss()` and `dispose()`). */
  imagePath?: string;
}

/** The power-loss simulation over one store directory (see the file comment). */
export class PowerLossFs implements StoreFs {
  readonly #dir: string;
  readonly #image: DurableImage;
  readonly #ownImage: boolean;
  readonly #inflight = new Set<Promise<unknown>>();
  #dead = false;

  /** Takes what is in `dir` now as durable (a freshly rebuilt or closed store). */
  constructor(dir: string, opts: PowerLossFsOptions = {}) {
    this.#dir = dir;
    this.#ownImage = opts.imagePath === undefined;
    this.#image = new DurableImage(opts.imagePath ?? mkdtempSync(join(tmpdir(), 'meshctl-image-')), dir);
  }

  open(path: string, flags: string): Promise<number> {
    return this.#call(async () => {
      const fd = await nodeStoreFs.open(path, flags);
      // A new file (or a reused inode number) holds nothing durable until its first fdatasync.
      const ino = fstatSync(fd).ino;
      if (!this.#image.isEntry(ino)) this.#image.setData(ino, Buffer.alloc(0));
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
      this.#image.setData(ino, content);
    });
  }

  truncate(path: string, size: number): Promise<void> {
    return this.#call(async () => {
      await nodeStoreFs.truncate(path, size);
      this.#image.setData(statSync(path).ino, readFileSync(path));
    });
  }

  fsyncDir(dir: string): Promise<void> {
    if (dir !== this.#dir) return Promise.reject(new Error(`PowerLossFs covers ${this.#dir}, not ${dir}`));
    const entries = listEntries(dir);
    return this.#call(async () => {
      await nodeStoreFs.fsyncDir(dir);
      this.#image.setEntries(entries, dir);
    });
  }

  /** Cuts the power: the store using this layer never hears back again; the directory keeps only what was durable. */
  async powerLoss(): Promise<void> {
    this.#dead = true;
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
    this.#image.restore(this.#dir);
    this.dispose();
  }

  /** Removes the image when this layer made it (a test that ends without a power cut). */
  dispose(): void {
    if (this.#ownImage) rmSync(this.#image.path, { recursive: true, force: true });
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
}
