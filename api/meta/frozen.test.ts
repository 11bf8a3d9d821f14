import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deepFreeze, frozenJsonCopy, jsonCopy, jsonText, rememberJsonText } from './frozen.ts';

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

test('jsonText answers with the text remembered for a frozen object, for the last writes only', () => {
  const obj = deepFreeze({ a: 1 });
  // A marker text shows which text is answered (a real caller records the object's own JSON).
  rememberJsonText(obj, '{"remembered":true}');
  assert.equal(jsonText(obj), '{"remembered":true}');
  const open = { a: 1 };
  rememberJsonText(open, '{"remembered":true}');
  assert.equal(jsonText(open), '{"a":1}', 'an object that can still change is encoded');
  assert.equal(jsonText('x'), '"x"');
  assert.equal(jsonText(null), 'null');
  // Two generations of later writes push it out: then it is encoded again.
  for (let i = 0; i < 1024; i++) rememberJsonText(deepFreeze({ i }), '{}');
  assert.equal(jsonText(obj), '{"remembered":true}', 'kept for one more generation');
  for (let i = 0; i < 1024; i++) rememberJsonText(deepFreeze({ i }), '{}');
  assert.equal(jsonText(obj), '{"a":1}');
});

test('jsonCopy makes what a JSON round trip makes, unfrozen and unshared', () => {
  const shared = deepFreeze({ spec: { a: [1, { b: 2 }] } });
  const values: unknown[] = [
    { a: 1, e: [1, 'two', null, { f: [] }], gone: undefined, fn: () => 1, n: -0, d: new Date(0), shared },
    [undefined, () => 1, NaN, Infinity, 1.5, shared],
    JSON.parse('{"__proto__": {"polluted": true}, "x": 1}'),
  ];
  for (const v of values) {
    const copy = jsonCopy(v);
    assert.deepStrictEqual(copy, viaJson(v), JSON.stringify(v));
    assert.equal(JSON.stringify(copy), JSON.stringify(v));
    const walk = (x: unknown, from: unknown): void => {
      if (x === null || typeof x !== 'object') return;
      assert.ok(!Object.isFrozen(x) && x !== from, 'a fresh, changeable copy throughout');
      for (const k of Object.keys(x)) walk((x as Record<string, unknown>)[k], (from as Record<string, unknown>)?.[k]);
    };
    walk(copy, v);
  }
  assert.equal(Object.getPrototypeOf(jsonCopy(values[2])), Object.prototype);
});
