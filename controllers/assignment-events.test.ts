import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Assignment, AssignmentStatus } from '../api/v1alpha1/generated/index.ts';
import { appliedEvent } from './assignment-events.ts';

const NOW = '2030-01-01T00:00:00Z';
const applied = (status: 'True' | 'False', reason: string, message = `${reason} happened`): AssignmentStatus => ({
  conditions: [{ type: 'Applied', status, reason, message, lastTransitionTime: NOW }],
});
const asg = (status?: AssignmentStatus): Assignment => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Assignment',
  metadata: { name: 'web-on-a', uid: 'u1' },
  spec: { module: 'web', node: 'a' },
  ...(status ? { status } : {}),
});

test('an event when Applied changes status or reason: Normal for Applied and Pending, Warning otherwise', () => {
  assert.equal(appliedEvent(asg(), applied('False', 'Pending'), NOW)?.type, 'Normal');
  assert.equal(appliedEvent(asg(applied('False', 'Pending')), applied('True', 'Applied'), NOW)?.type, 'Normal');
  const failed = appliedEvent(asg(applied('True', 'Applied')), applied('False', 'Failed', 'dir: EACCES'), NOW);
  assert.deepEqual(
    [failed?.type, failed?.reason, failed?.message, failed?.involvedObject, failed?.lastTimestamp],
    [
      'Warning',
      'Failed',
      'dir: EACCES',
      { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Assignment', name: 'web-on-a', uid: 'u1' },
      NOW,
    ],
  );
  assert.equal(appliedEvent(asg(applied('False', 'Pending')), applied('False', 'NodeNotFound'), NOW)?.type, 'Warning');
});

test('no event when Applied keeps its status and reason (a message or version change alone is no transition)', () => {
  const before = asg(applied('False', 'Pending', 'generation 1'));
  assert.equal(appliedEvent(before, applied('False', 'Pending', 'generation 2'), NOW), undefined);
  assert.equal(appliedEvent(before, {}, NOW), undefined);
});
