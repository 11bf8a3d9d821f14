import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { jsonEqual } from './json-equal.ts';

/** Pairs of JSON values, equal and not, each also checked against isDeepStrictEqual's answer. */
const PAIRS: Array<[unknown, unknown]> = [
  [1, 1],
  [1, 2],
  [1, '1'],
  [0, -0],
  [NaN, NaN],
  [null, null],
  [null, {}],
  [null, undefined],
  ['a', 'a'],
  [true, false],
  [[], []],
  [[], {}],
  [{}, []],
  [
    [1, 2],
    [1, 2],
  ],
  [
    [1, 2],
    [2, 1],
  ],
  [
    [1, 2],
    [1, 2, 3],
  ],
  [
    { a: 1, b: [1, { c: 'x' }] },
    { b: [1, { c: 'x' }], a: 1 },
  ],
  [
    { a: 1, b: [1, { c: 'x' }] },
    { a: 1, b: [1, { c: 'y' }] },
  ],
  [{ a: 1 }, { a: 1, b: 2 }],
  [
    { a: 1, b: 2 },
    { a: 1, c: 2 },
  ],
  [{ a: undefined }, {}],
  [{}, { a: undefined }],
  [{ a: undefined }, { b: undefined }],
  [{ a: undefined }, { a: undefined }],
  [{ a: { b: null } }, { a: { b: null } }],
  [{ a: { b: null } }, { a: { b: 0 } }],
];

test('jsonEqual answers as isDeepStrictEqual does for JSON values', () => {
  for (const [a, b] of PAIRS) {
    const want = isDeepStrictEqual(a, b);
    assert.equal(jsonEqual(a, b), want, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    assert.equal(jsonEqual(b, a), want, `${JSON.stringify(b)} vs ${JSON.stringify(a)}`);
  }
});

test('a subtree both sides share is equal without being walked', () => {
  const shared = { spec: [1, 2, 3] };
  let reads = 0;
  // A getter counts the reads of the shared subtree's key: comparing the two parents must not read it.
  Object.defineProperty(shared, 'watched', { enumerable: true, get: () => (reads++, 1) });
  assert.equal(jsonEqual({ s: shared, n: 1 }, { s: shared, n: 1 }), true);
  assert.equal(reads, 0);
  assert.equal(jsonEqual({ s: shared, n: 1 }, { s: shared, n: 2 }), false);
});
