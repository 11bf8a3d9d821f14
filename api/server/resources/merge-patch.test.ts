import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch } from './merge-patch.ts';

test('RFC 7386 appendix A examples', () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, want] of cases)
    assert.deepEqual(applyMergePatch(target, patch), want, JSON.stringify({ target, patch }));
});

test('neither input is modified, and __proto__ keys stay plain data', () => {
  const target = { spec: { a: 1, nested: { x: 1 } } };
  const patch = JSON.parse('{"spec":{"nested":{"x":null,"y":2}},"__proto__":{"polluted":true}}') as unknown;
  const before = structuredClone(target);
  const out = applyMergePatch(target, patch) as Record<string, unknown>;
  assert.deepEqual(target, before);
  assert.deepEqual(out.spec, { a: 1, nested: { y: 2 } });
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { polluted: true });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("the result shares the target's untouched parts, copies the patched path, and keeps a target's own __proto__ key", () => {
  const target = JSON.parse('{"spec":{"big":{"x":1}},"status":{"a":{"b":1},"c":"old"},"__proto__":{"k":1}}') as Record<
    string,
    Record<string, unknown>
  >;
  const out = applyMergePatch(target, { status: { c: 'new' } }) as typeof target;
  assert.equal(out.spec, target.spec, 'an untouched subtree is shared, not cloned');
  assert.equal(out.status.a, target.status.a);
  assert.notEqual(out.status, target.status, 'the patched path is a new object');
  assert.equal(target.status.c, 'old');
  assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { k: 1 });
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
});
