import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { resetStdout, writeStdout, type StdoutSink } from './stdout.ts';

/** A sink whose writeSync takes at most `chunk` bytes a call and fails with the given codes in turn. */
function fakeSink(chunk: number, failures: Array<string | undefined> = []) {
  const got = { sync: '', stream: '', gone: 0 };
  const sink: StdoutSink = {
    writeSync: (data) => {
      const code = failures.shift();
      if (code) throw Object.assign(new Error(code), { code });
      const n = Math.min(chunk, data.length);
      got.sync += Buffer.from(data.subarray(0, n)).toString();
      return n;
    },
    stream: (data) => void (got.stream += Buffer.from(data).toString()),
    readerGone: () => void got.gone++,
  };
  return { sink, got };
}

afterEach(resetStdout);

test('writes the whole text with writeSync, across partial writes', () => {
  const { sink, got } = fakeSink(3);
  writeStdout('NAME  AGE\nnode-a 5m\n', sink);
  writeStdout('µs é\n', sink);
  assert.deepEqual(got, { sync: 'NAME  AGE\nnode-a 5m\nµs é\n', stream: '', gone: 0 });
});

test('EAGAIN: the rest, and every later text, go through the stream in order', () => {
  const { sink, got } = fakeSink(4, [undefined, 'EAGAIN']);
  writeStdout('abcdefgh', sink);
  writeStdout('ij', sink);
  assert.deepEqual(got, { sync: 'abcd', stream: 'efghij', gone: 0 });
});

test('EPIPE (the reader went away) ends quietly; other errors are thrown', () => {
  const { sink, got } = fakeSink(10, ['EPIPE']);
  writeStdout('abc', sink);
  assert.deepEqual(got, { sync: '', stream: '', gone: 1 });
  const other = fakeSink(10, ['EIO']);
  assert.throws(() => writeStdout('abc', other.sink), /EIO/);
});
