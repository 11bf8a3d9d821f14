import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deepFreeze } from '../meta/frozen.ts';
import { formatOwnerRecords, OWNERS_ANNOTATION, readOwnerRecords } from './owner-records.ts';

test('owner records round-trip through the annotation and garbage reads as empty', () => {
  const records = { b: { version: '2', generation: 3 }, a: { version: '1', generation: 1 } };
  const text = formatOwnerRecords(records);
  assert.equal(text, '{"a":{"version":"1","generation":1},"b":{"version":"2","generation":3}}');
  const decl = { apiVersion: 'x', kind: 'Declaration', metadata: { annotations: { [OWNERS_ANNOTATION]: text } } };
  assert.deepEqual(readOwnerRecords(decl), records);
  for (const bad of ['not json', '[]', '{"a":{"version":1}}', 'null']) {
    assert.deepEqual(readOwnerRecords({ ...decl, metadata: { annotations: { [OWNERS_ANNOTATION]: bad } } }), {});
  }
});

test("a frozen (stored) Declaration's owner records are read once; an unfrozen one's every time", () => {
  const text = formatOwnerRecords({ a: { version: '1', generation: 1 } });
  const stored = deepFreeze({
    apiVersion: 'x',
    kind: 'Declaration',
    metadata: { annotations: { [OWNERS_ANNOTATION]: text } },
  });
  const first = readOwnerRecords(stored);
  assert.equal(readOwnerRecords(stored), first, 'read again from the same stored object');
  assert.ok(Object.isFrozen(first), 'shared, so frozen');
  // Another version of the object (another write) is read anew.
  const next = deepFreeze({
    ...stored,
    metadata: { annotations: { [OWNERS_ANNOTATION]: formatOwnerRecords({ a: { version: '2', generation: 2 } }) } },
  });
  assert.deepEqual(readOwnerRecords(next), { a: { version: '2', generation: 2 } });
  // An object a caller may still change is never remembered.
  const open = { apiVersion: 'x', kind: 'Declaration', metadata: { annotations: { [OWNERS_ANNOTATION]: text } } };
  const read = readOwnerRecords(open);
  open.metadata.annotations[OWNERS_ANNOTATION] = formatOwnerRecords({ b: { version: '3', generation: 1 } });
  assert.notEqual(readOwnerRecords(open), read);
  assert.deepEqual(readOwnerRecords(open), { b: { version: '3', generation: 1 } });
});
