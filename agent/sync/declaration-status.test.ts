import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import { validateObject } from '../../api/v1alpha1/validate.ts';
import type { ResourceResult } from '../engine/types.ts';
import { declarationStatus } from './declaration-status.ts';

const [T1, T2, T3] = ['2026-08-27T12:00:01Z', '2026-08-27T12:00:02Z', '2026-08-27T12:00:03Z'];
const decl: Declaration = {
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Declaration',
  metadata: { name: 'a', uid: 'u', generation: 7 },
  spec: {
    generation: 4,
    resources: [
      { id: 'w/dir', owner: 'w', kind: 'Directory', spec: { path: '/w' } },
      { id: 'w/conf', owner: 'w', kind: 'File', spec: { path: '/w/c' } },
    ],
  },
};
const r = (
  id: string,
  state: ResourceResult['state'],
  action: ResourceResult['action'] = 'noop',
  message?: string,
): ResourceResult => ({ id, kind: 'File', owner: 'w', action, state, ...(message ? { message } : {}) });

test('declaration status: before a reconcile of this generation, every resource is Pending', () => {
  const s = declarationStatus({
    decl,
    run: { uid: 'u', generation: 6, results: [r('old', 'Applied')], at: '' },
    appliedGeneration: 3,
    now: T1,
  });
  assert.equal(s.observedGeneration, 7);
  assert.equal(s.appliedGeneration, 3);
  assert.deepEqual(s.results, [
    { id: 'w/dir', state: 'Pending' },
    { id: 'w/conf', state: 'Pending' },
  ]);
  assert.deepEqual(
    s.conditions?.map((c) => [c.type, c.status, c.reason]),
    [
      ['Applied', 'False', 'Pending'],
      ['Ready', 'False', 'Pending'],
    ],
  );
  assert.deepEqual(validateObject({ ...decl, status: s }), [], 'valid against the Declaration schema');
});

test('declaration status: per-resource results in declaration order, removals left out; conditions keep their transition time', () => {
  const results = [
    r('w/dir', 'Applied'),
    r('w/conf', 'Failed', 'create', 'x'.repeat(5000)),
    r('w/dir', 'Removed', 'remove'),
    r('gone', 'Retained', 'remove'),
  ];
  const failed = declarationStatus({
    decl,
    run: { uid: 'u', generation: 7, results, at: '' },
    appliedGeneration: 3,
    now: T1,
  });
  assert.deepEqual(
    failed.results?.map((x) => [x.id, x.state]),
    [
      ['w/dir', 'Applied'],
      ['w/conf', 'Failed'],
    ],
  );
  assert.equal(failed.results?.[1]?.message?.length, 4096);
  assert.deepEqual(
    failed.conditions?.map((c) => [c.type, c.status, c.reason]),
    [
      ['Applied', 'False', 'NotApplied'],
      ['Ready', 'False', 'ResourcesNotApplied'],
    ],
  );
  assert.match(failed.conditions?.[1]?.message ?? '', /^1 of 2 resources not applied: w\/conf Failed: x/);
  assert.deepEqual(validateObject({ ...decl, status: failed }), []);

  const ok = declarationStatus({
    decl,
    run: { uid: 'u', generation: 7, results: [r('w/dir', 'Applied'), r('w/conf', 'Applied')], at: '' },
    appliedGeneration: 4,
    previous: failed.conditions,
    now: T2,
  });
  assert.deepEqual(
    ok.conditions?.map((c) => [c.type, c.status, c.lastTransitionTime]),
    [
      ['Applied', 'True', T2],
      ['Ready', 'True', T2],
    ],
  );
  const later = declarationStatus({
    decl,
    run: { uid: 'u', generation: 7, results: [r('w/dir', 'Applied'), r('w/conf', 'Applied')], at: '' },
    appliedGeneration: 4,
    previous: ok.conditions,
    now: T3,
  });
  assert.deepEqual(later, ok, 'nothing changed: the same status (so it is not written again)');
});

test('declaration status: only Waiting resources left (a certificate not issued yet): both conditions say Waiting', () => {
  const s = declarationStatus({
    decl,
    run: {
      uid: 'u',
      generation: 7,
      results: [r('w/dir', 'Applied'), r('w/conf', 'Waiting', 'create', 'waits')],
      at: '',
    },
    now: T1,
  });
  assert.deepEqual(s.results, [
    { id: 'w/dir', state: 'Applied' },
    { id: 'w/conf', state: 'Waiting', message: 'waits' },
  ]);
  assert.deepEqual(
    s.conditions?.map((c) => [c.type, c.status, c.reason]),
    [
      ['Applied', 'False', 'Waiting'],
      ['Ready', 'False', 'Waiting'],
    ],
  );
  assert.deepEqual(validateObject({ ...decl, status: s }), [], 'valid against the Declaration schema');
  const failedToo = declarationStatus({
    decl,
    run: { uid: 'u', generation: 7, results: [r('w/dir', 'Failed', 'create', 'x'), r('w/conf', 'Waiting')], at: '' },
    now: T1,
  });
  assert.deepEqual(
    failedToo.conditions?.map((c) => c.reason),
    ['NotApplied', 'ResourcesNotApplied'],
  );
});
