import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NdjsonDecoder, decodeNdjson } from './ndjson.ts';

test('values split across chunks, several per chunk, CRLF and blank heartbeat lines', () => {
  const d = new NdjsonDecoder();
  const text =
    '{"type":"ADDED","object":{"n":1}}\n\n{"type":"MODIFIED",' +
    '"object":{"n":"é"}}\r\n\n\n{"type":"DELETED","object":{}}\n';
  const bytes = Buffer.from(text);
  const seen: unknown[] = [];
  for (let i = 0; i < bytes.length; i += 3) seen.push(...d.push(bytes.subarray(i, i + 3)));
  seen.push(...d.end());
  assert.deepEqual(seen, [
    { type: 'ADDED', object: { n: 1 } },
    { type: 'MODIFIED', object: { n: 'é' } },
    { type: 'DELETED', object: {} },
  ]);
});

test('a last value without a trailing newline is delivered at the end', async () => {
  async function* chunks() {
    yield '{"a":1}\n{"b"';
    yield ':2}';
  }
  const values: unknown[] = [];
  for await (const v of decodeNdjson(chunks())) values.push(v);
  assert.deepEqual(values, [{ a: 1 }, { b: 2 }]);
});

test('a malformed line is a SyntaxError naming it', () => {
  assert.throws(
    () => new NdjsonDecoder().push('{"a":\n'),
    (e) => e instanceof SyntaxError && /malformed watch event: \{"a":/.test(e.message),
  );
});
