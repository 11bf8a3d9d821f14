import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findCondition, setCondition } from './conditions.ts';
import type { Condition } from './types.ts';

const other: Condition = {
  type: 'Other',
  status: 'True',
  reason: 'X',
  message: '',
  lastTransitionTime: '2026-01-01T00:00:00Z',
};

test('setCondition appends a new type, stamped now; the input list is left alone', () => {
  const input = [other];
  const out = setCondition(
    input,
    { type: 'Applied', status: 'False', reason: 'Pending', message: 'm' },
    '2026-01-02T00:00:00Z',
  );
  assert.deepEqual(out, [
    other,
    { type: 'Applied', status: 'False', reason: 'Pending', message: 'm', lastTransitionTime: '2026-01-02T00:00:00Z' },
  ]);
  assert.deepEqual(input, [other]);
});

test('setCondition replaces in place; lastTransitionTime moves only when the status flips', () => {
  const pending = setCondition(
    [other],
    { type: 'Applied', status: 'False', reason: 'Pending', message: 'm' },
    '2026-01-02T00:00:00Z',
  );
  const failed = setCondition(
    pending,
    { type: 'Applied', status: 'False', reason: 'Failed', message: 'n' },
    '2026-01-03T00:00:00Z',
  );
  assert.equal(failed.length, 2);
  assert.deepEqual(failed[1], {
    type: 'Applied',
    status: 'False',
    reason: 'Failed',
    message: 'n',
    lastTransitionTime: '2026-01-02T00:00:00Z',
  });
  const first = setCondition(
    failed,
    { type: 'Other', status: 'False', reason: 'Y', message: '' },
    '2026-01-04T00:00:00Z',
  );
  assert.deepEqual(
    first.map((c) => [c.type, c.lastTransitionTime]),
    [
      ['Other', '2026-01-04T00:00:00Z'],
      ['Applied', '2026-01-02T00:00:00Z'],
    ],
  );
});

test('findCondition finds by type, in an absent list too', () => {
  assert.equal(findCondition([other], 'Other'), other);
  assert.equal(findCondition([other], 'Applied'), undefined);
  assert.equal(findCondition(undefined, 'Other'), undefined);
});
