import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isReason } from '../../meta/api-error.ts';
import { applyJsonPatch } from './json-patch.ts';

test('RFC 6902 appendix A examples', () => {
  const cases: [unknown, unknown[], unknown][] = [
    [{ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }], { baz: 'qux', foo: 'bar' }],
    [{ foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }], { foo: ['bar', 'qux', 'baz'] }],
    [{ baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
    [{ foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }], { foo: ['bar', 'baz'] }],
    [{ baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }], { baz: 'boo', foo: 'bar' }],
    [
      { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    ],
    [
      { foo: ['all', 'grass', 'cows', 'eat'] },
      [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      { foo: ['all', 'cows', 'eat', 'grass'] },
    ],
    [
      { baz: 'qux', foo: ['a', 2, 'c'] },
      [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      { baz: 'qux', foo: ['a', 2, 'c'] },
    ],
    [
      { foo: 'bar' },
      [{ op: 'add', path: '/child', value: { grandchild: {} } }],
      { foo: 'bar', child: { grandchild: {} } },
    ],
    [{ foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }], { foo: ['bar', ['abc', 'def']] }],
    [
      { '/': 9, '~1': 10 },
      [
        { op: 'test', path: '/~01', value: 10 },
        { op: 'copy', from: '/~1', path: '/x' },
      ],
      { '/': 9, '~1': 10, x: 9 },
    ],
    [{ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }], { b: 2 }],
  ];
  for (const [doc, patch, want] of cases) {
    const before = structuredClone(doc);
    assert.deepEqual(applyJsonPatch(doc, patch), want, JSON.stringify(patch));
    assert.deepEqual(doc, before, 'the input is not changed');
  }
});

test('errors: a failed test, a missing target or index out of range is 422 Invalid; a malformed operation is 400', () => {
  const invalid = (doc: unknown, patch: unknown[]): void =>
    assert.throws(
      () => applyJsonPatch(doc, patch),
      (e: unknown) => isReason(e, 'Invalid'),
      JSON.stringify(patch),
    );
  invalid({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]);
  invalid({ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]);
  invalid({ foo: 'bar' }, [{ op: 'remove', path: '/nope' }]);
  invalid({ foo: [1] }, [{ op: 'add', path: '/foo/5', value: 2 }]);
  invalid({ foo: [1] }, [{ op: 'replace', path: '/foo/1', value: 2 }]);
  const bad = (patch: unknown[]): void =>
    assert.throws(
      () => applyJsonPatch({}, patch),
      (e: unknown) => isReason(e, 'BadRequest'),
      JSON.stringify(patch),
    );
  bad([{ op: 'jump', path: '/a' }]);
  bad([{ op: 'add', path: '/a' }]);
  bad([{ op: 'add', path: 'a', value: 1 }]);
  bad([{ op: 'move', path: '/a' }]);
  bad(['add']);
});
