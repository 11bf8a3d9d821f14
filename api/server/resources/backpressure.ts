/**
 * Writing many Buffers to a response without queuing them all: each `write()` that returns false (the socket's
 * buffer is over its high-water mark) waits for `drain`, so a slow reader holds at most about one chunk in the
 * server's memory, and the chunks themselves are shared (watch-snapshots.ts), never copied per client.
 */
import type { Writable } from 'node:stream';

/**
 * Writes `chunks` in order, waiting for `drain` whenever the stream asks to; resolves true once all are
 * queued, false when the stream closed or `stopped()` turned true first.
 */
export async function writeChunks(out: Writable, chunks: readonly Buffer[], stopped: () => boolean): Promise<boolean> {
  for (const chunk of chunks) {
    if (stopped() || out.destroyed || out.writableEnded) return false;
    if (!out.write(chunk)) await drainedOrClosed(out);
  }
  return !stopped() && !out.destroyed && !out.writableEnded;
}

function drainedOrClosed(out: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}
