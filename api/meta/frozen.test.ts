import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deepFreeze, frozenJsonCopy } from './frozen.ts';

const viaJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

test('frozenJsonCopy makes what a JSON round trip makes, deep-frozen', () => {
  const values: unknown[] = [
    { a: 1, b: 'x', c: true, d: null, e: [1, 'two', null, { f: [] }] },
    { gone: undefined, fn: () => 1, sym: Symbol('s'), kept: 0 },
    [undefined, () => 1, Symbol('s'), NaN, Infinity, -0, 1.5],
    { n: -0, nan: NaN, inf: -Infinity, date: new Date(0), nested: { date: new Date(1000) } },
    { '2': 'b', '1': 'a', z: 1, y: 2 },
    'text',
    7,
  ];
  for (const v of values) {
    const copy = frozenJsonCopy(v);
    assert.deepStrictEqual(copy, viaJson(v), JSON.stringify(v));
    assert.deepStrictEqual(Object.keys(copy as object), Object.keys(viaJson(v) as object), 'key order');
    const walk = (x: unknown): void => {
      if (x === null || typeof x !== 'object') return;
      assert.ok(Object.isFrozen(x), 'frozen throughout');
      Object.values(x).forEach(walk);
    };
    walk(copy);
  }
});

test('frozenJsonCopy shares the frozen parts and copies the rest', () => {
  const spec = deepFreeze({ resources: [{ id: 'a', spec: { path: '/x' } }] });
  const input = { metadata: { name: 'n', labels: { a: 'b' } }, spec, status: { applied: 2 } };
  const copy = frozenJsonCopy(input);
  assert.equal(copy.spec, spec, 'a frozen part is shared, not copied');
  assert.notEqual(copy.metadata, input.metadata, 'an unfrozen part is copied');
  assert.notEqual(copy.status, input.status);
  input.status.applied = 3;
  assert.equal(copy.status.applied, 2, 'the copy does not follow later changes of the input');
  assert.throws(() => JSON.parse(JSON.stringify({ n: 1n })));
  assert.throws(() => frozenJsonCopy({ n: 1n }), TypeError);
});
