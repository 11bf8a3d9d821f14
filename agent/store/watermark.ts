/**
 * The store's watermark: a tiny file beside the store (`<state-dir>/store.watermark.json`) recording a
 * resourceVersion the store is known to have made durable. The journal treats a torn or missing tail as
 * "never acknowledged", which is right after a crash but would also accept a store file that was
 * truncated or rolled back later — and an agent starting from such a store could remove what it owns.
 * The watermark is written only AFTER the store's writes up to it are durable (lazily, at most one
 * write per `delayMs`, and on close), so a healthy store always holds at least the watermark; a store
 * below it was damaged after the fact, and the agent refuses to start from it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../api/meta/atomic-file.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** The watermark file of a state directory. */
export function watermarkPath(stateDir: string): string {
  return join(stateDir, 'store.watermark.json');
}

/** What the watermark records. */
export interface Watermark {
  resourceVersion: number;
  /** metadata.generation of the stored declaration at that point (for the error message). */
  declarationGeneration?: number;
}

/** Reads the watermark; undefined when there is none; throws naming the file when it is unreadable. */
export async function readWatermark(stateDir: string): Promise<Watermark | undefined> {
  const file = watermarkPath(stateDir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const w = JSON.parse(text) as Partial<Watermark>;
    if (!Number.isSafeInteger(w.resourceVersion)) throw new Error('no integer resourceVersion');
    return w as Watermark;
  } catch (e) {
    throw new Error(
      `damaged store watermark ${file}: ${(e as Error).message}; refusing to start (if the store is known to be good, delete this file)`,
    );
  }
}

/** Writes watermarks lazily and in order; `flush()` writes the newest one now. */
export interface WatermarkWriter {
  /** Records that the store is durable up to `w` (a later write of the file is scheduled). */
  advance(w: Watermark): void;
  /** Writes the newest watermark if it was not written yet. */
  flush(): Promise<void>;
}

/** Creates the lazy watermark writer of a state directory. */
export function createWatermarkWriter(opts: {
  stateDir: string;
  delayMs?: number;
  onError(e: unknown): void;
}): WatermarkWriter {
  let latest: Watermark | undefined;
  let written = -1;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  const write = (): Promise<void> => {
    chain = chain
      .then(async () => {
        const w = latest;
        if (!w || w.resourceVersion <= written) return;
        await writeFileAtomic(watermarkPath(opts.stateDir), JSON.stringify(w) + '\n', { mode: 0o600 });
        written = w.resourceVersion;
      })
      .catch(opts.onError);
    return chain;
  };
  return {
    advance(w) {
      if (latest && w.resourceVersion <= latest.resourceVersion) return;
      latest = w;
      timer ??= setTimeout(() => {
        timer = undefined;
        void write();
      }, opts.delayMs ?? 200);
    },
    async flush() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await write();
    },
  };
}
