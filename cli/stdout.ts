/**
 * meshctl's standard output: each text written at once with `fs.writeSync(1, …)`, as Node's own stdout does for
 * files, pipes and terminals on Linux (synchronously), but without making `process.stdout`: that stream costs every
 * run the stream modules, and for a terminal `node:tty` and `node:net` (bench/RESULTS.md §3). When the descriptor
 * is non-blocking and full (EAGAIN: a descriptor shared with a process that made it so), the rest and everything
 * after it go through `process.stdout`, which waits; a reader that went away (EPIPE: `meshctl get nodes | head -1`)
 * ends meshctl quietly with exit code 0, as kubectl does.
 */
import { writeSync } from 'node:fs';
import { EXIT_OK } from './errors.ts';

/** What writeStdout needs from the system (tests give their own). */
export interface StdoutSink {
  /** `fs.writeSync` on the output descriptor: bytes written, or throws (EAGAIN, EPIPE, …). */
  writeSync(data: Uint8Array): number;
  /** The stream fallback for the bytes writeSync could not take: `process.stdout.write`. */
  stream(data: Uint8Array): void;
  /** Called on EPIPE: `process.exit(0)`. */
  readerGone(): void;
}

const processSink: StdoutSink = {
  writeSync: (data) => writeSync(1, data),
  stream: (data) => {
    if (!process.stdout.listenerCount('error'))
      process.stdout.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'EPIPE') process.exit(EXIT_OK);
      });
    process.stdout.write(data);
  },
  readerGone: () => process.exit(EXIT_OK),
};

/** Set once the stream took over (after EAGAIN): later texts follow it there, in order. */
let streaming = false;

/** Writes `text` to standard output (see the file comment). */
export function writeStdout(text: string, sink: StdoutSink = processSink): void {
  let data = Buffer.from(text);
  while (data.length && !streaming) {
    try {
      data = data.subarray(sink.writeSync(data));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return sink.readerGone();
      if (code !== 'EAGAIN') throw e;
      streaming = true;
    }
  }
  if (data.length) sink.stream(data);
}

/** Forgets that the stream took over (for tests). */
export function resetStdout(): void {
  streaming = false;
}
