import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { applyMergePatch, threeWayMergePatch } from './merge-patch.ts';

test('unchanged manifest and no drift: empty patch', () => {
  const manifest = { spec: { a: 1, list: [1, 2] }, metadata: { name: 'x' } };
  const live = {
    spec: { a: 1, list: [1, 2], defaulted: true },
    metadata: { name: 'x', uid: 'u' },
    status: { ok: true },
  };
  assert.deepEqual(threeWayMergePatch(manifest, manifest, live), {});
});

test('a changed field is set; a field removed from the manifest is deleted; fields never applied are kept', () => {
  const original = { spec: { a: 1, b: 2, nested: { x: 1, y: 2 } } };
  const modified = { spec: { a: 5, nested: { x: 1 } } };
  const live = { spec: { a: 1, b: 2, nested: { x: 1, y: 2, z: 3 }, serverSet: 'keep' } };
  const patch = threeWayMergePatch(original, modified, live);
  assert.deepEqual(patch, { spec: { a: 5, b: null, nested: { y: null } } });
  assert.deepEqual(applyMergePatch(live, patch), { spec: { a: 5, nested: { x: 1, z: 3 }, serverSet: 'keep' } });
});

test('without a last-applied manifest nothing is deleted, drift on applied fields is corrected', () => {
  const patch = threeWayMergePatch(undefined, { spec: { a: 1 } }, { spec: { a: 2, b: 3 } });
  assert.deepEqual(patch, { spec: { a: 1 } });
});

test('lists are replaced whole; key order does not matter', () => {
  assert.deepEqual(threeWayMergePatch({ l: [1, 2] }, { l: [2, 1] }, { l: [1, 2] }), { l: [2, 1] });
  assert.ok(isDeepStrictEqual({ a: 1, b: { c: [1, { d: 2 }] } }, { b: { c: [1, { d: 2 }] }, a: 1 }));
  assert.ok(!isDeepStrictEqual({ a: 1 }, { a: 1, b: undefined }));
});

test('applyMergePatch follows RFC 7386 examples', () => {
  assert.deepEqual(applyMergePatch({ a: 'b' }, { a: 'c' }), { a: 'c' });
  assert.deepEqual(applyMergePatch({ a: 'b' }, { b: 'c' }), { a: 'b', b: 'c' });
  assert.deepEqual(applyMergePatch({ a: 'b' }, { a: null }), {});
  assert.deepEqual(applyMergePatch({ a: [{ b: 'c' }] }, { a: [1] }), { a: [1] });
  assert.deepEqual(applyMergePatch({ e: null }, { a: 1 }), { e: null, a: 1 });
  assert.deepEqual(applyMergePatch({}, { a: { bb: { ccc: null } } }), { a: { bb: {} } });
});
