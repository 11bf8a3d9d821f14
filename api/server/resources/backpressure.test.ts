import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { writeChunks } from './backpressure.ts';

/** A stream whose writes complete only when the test says so (a client that reads when it likes). */
function slowReader(highWaterMark: number): { out: Writable; got: Buffer[]; readOne(): void } {
  const got: Buffer[] = [];
  const pending: (() => void)[] = [];
  const out = new Writable({
    highWaterMark,
    write(chunk: Buffer, _enc, cb) {
      got.push(chunk);
      pending.push(cb);
    },
  });
  return { out, got, readOne: () => pending.shift()?.() };
}

test('writeChunks queues one chunk at a time while the reader is slow, and all of them in order', async () => {
  const chunks = Array.from({ length: 20 }, (_, i) => Buffer.alloc(1000, i));
  const r = slowReader(1500);
  let finished: boolean | undefined;
  const done = writeChunks(r.out, chunks, () => false).then((ok) => (finished = ok));
  for (let i = 0; i < 200 && finished === undefined; i++) {
    // The stream never holds more than what is past its high-water mark plus one chunk.
    assert.ok(r.out.writableLength <= 2500, `buffered ${r.out.writableLength} bytes`);
    await new Promise((resolve) => setImmediate(resolve));
    r.readOne();
  }
  assert.equal(await done, true);
  assert.deepEqual(Buffer.concat(r.got), Buffer.concat(chunks));
  for (const [i, c] of r.got.entries()) assert.equal(c, chunks[i], 'the very Buffer, not a copy');
});

test('writeChunks stops when the stream closes or the caller stops', async () => {
  const chunks = Array.from({ length: 10 }, () => Buffer.alloc(1000));
  const closed = slowReader(100);
  const first = writeChunks(closed.out, chunks, () => false);
  closed.out.destroy();
  assert.equal(await first, false);
  assert.equal(closed.got.length, 1);
  let stop = false;
  const stopped = slowReader(100);
  const second = writeChunks(stopped.out, chunks, () => stop);
  stop = true;
  stopped.readOne();
  assert.equal(await second, false);
  assert.equal(stopped.got.length, 1);
});
