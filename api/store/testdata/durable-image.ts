/**
 * What a power cut would leave of a store directory, kept in files of its own so that it outlives the process
 * that wrote the store: each file's content as of its last successful fdatasync (by inode, so renames carry
 * it: `data/<inode>`), and the directory's entries as of its last successful fsync (`entries.json`, name →
 * inode). Every update is a write to a temp file and a rename, so a process killed in the middle leaves the
 * previous image whole. `restore` rebuilds the directory from it: a file whose entry is durable but whose
 * data never was comes back empty. Used by PowerLossFs (power-loss-fs.ts), in the writing process, and by
 * the tests that SIGKILL that process and then cut the power (`restoreDurableImage`).
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Files left out of the image: the lock's owner dies with the power. */
const UNTRACKED = /^LOCK/;

/** The entries of a directory now: name → inode (files that vanish meanwhile are left out). */
export function listEntries(dir: string): Map<string, number> {
  const entries = new Map<string, number>();
  for (const name of readdirSync(dir)) {
    if (UNTRACKED.test(name)) continue;
    const ino = statSync(join(dir, name), { throwIfNoEntry: false })?.ino;
    if (ino !== undefined) entries.set(name, ino);
  }
  return entries;
}

/** The durable image of one store directory (see the file comment). */
export class DurableImage {
  readonly path: string;
  #entries: Map<string, number>;
  #tmp = 0;

  /** Opens the image at `path`, or, when `capture` names a directory, takes everything in it as durable now. */
  constructor(path: string, capture?: string) {
    this.path = path;
    mkdirSync(join(path, 'data'), { recursive: true });
    if (capture === undefined) {
      this.#entries = new Map(Object.entries(JSON.parse(readFileSync(join(path, 'entries.json'), 'utf8'))));
      return;
    }
    rmSync(join(path, 'data'), { recursive: true, force: true });
    mkdirSync(join(path, 'data'));
    this.#entries = listEntries(capture);
    for (const [name, ino] of this.#entries) this.setData(ino, readFileSync(join(capture, name)));
    this.setEntries(this.#entries, capture);
  }

  /** Whether `ino` is the inode of a durable entry. */
  isEntry(ino: number): boolean {
    for (const v of this.#entries.values()) if (v === ino) return true;
    return false;
  }

  /** Records `content` as inode `ino`'s durable data. */
  setData(ino: number, content: Buffer): void {
    this.#atomicWrite(join('data', String(ino)), content);
  }

  /** Records the directory's durable entries; drops the data of inodes that are neither durable nor in `dir`. */
  setEntries(entries: Map<string, number>, dir: string): void {
    this.#entries = new Map(entries);
    this.#atomicWrite('entries.json', Buffer.from(JSON.stringify(Object.fromEntries(entries))));
    const live = new Set([...entries.values(), ...listEntries(dir).values()]);
    for (const name of readdirSync(join(this.path, 'data'))) {
      if (/^\d+$/.test(name) && !live.has(Number(name))) rmSync(join(this.path, 'data', name), { force: true });
    }
  }

  /** Rebuilds `dir` as the power cut leaves it. */
  restore(dir: string): void {
    for (const name of readdirSync(dir)) rmSync(join(dir, name), { force: true });
    for (const [name, ino] of this.#entries) {
      const data = join(this.path, 'data', String(ino));
      writeFileSync(join(dir, name), statSync(data, { throwIfNoEntry: false }) ? readFileSync(data) : '');
    }
  }

  #atomicWrite(rel: string, content: Buffer): void {
    const tmp = join(this.path, `tmp-${process.pid}-${++this.#tmp}`);
    writeFileSync(tmp, content);
    renameSync(tmp, join(this.path, rel));
  }
}

/** Cuts the power after the process writing `dir` through a PowerLossFs with image `imagePath` was killed. */
export function restoreDurableImage(dir: string, imagePath: string): void {
  new DurableImage(imagePath).restore(dir);
}
