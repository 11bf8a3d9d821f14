// The pure parts of apply --prune: the applyset id, membership labels, the prune plan and its safety rails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { KubeObject } from '../api/meta/types.ts';
import { PART_OF_LABEL, applySetId, asMember, checkNotInOtherSet, sortKinds } from './applyset.ts';
import { checkPrunable, planPrune } from './prune.ts';

const obj = (kind: string, name: string, annotations?: Record<string, string>, labels?: Record<string, string>) =>
  ({ apiVersion: 'meshctl.dev/v1alpha1', kind, metadata: { name, annotations, labels } }) as KubeObject;

test("the id is kubectl's formula over the parent's name, (empty) namespace, kind and group", () => {
  const digest = createHash('sha256').update('site..ApplySet.meshctl.dev').digest('base64url');
  assert.equal(applySetId('site'), `applyset-${digest}-v1`);
  assert.match(applySetId('site'), /^applyset-[A-Za-z0-9_-]{43}-v1$/);
  assert.ok(applySetId('site').length <= 63, 'a valid label value');
  assert.notEqual(applySetId('site'), applySetId('site2'));
});

test('a member is labelled with the id, keeping its own labels; a member of another set is refused', () => {
  const m = asMember(obj('Node', 'a', undefined, { role: 'web' }), 'id-1');
  assert.deepEqual(m.metadata.labels, { role: 'web', [PART_OF_LABEL]: 'id-1' });
  assert.doesNotThrow(() => checkNotInOtherSet(m, 'id-1'));
  assert.doesNotThrow(() => checkNotInOtherSet(obj('Node', 'b'), 'id-1'));
  assert.throws(() => checkNotInOtherSet(m, 'id-2'), /node\/a is a member of another applyset/);
});

test('the plan deletes members the manifests no longer hold, keeps the annotated ones', () => {
  const members = [
    obj('Assignment', 'x'),
    obj('Node', 'kept', { 'meshctl.dev/prune': 'disabled' }),
    obj('Node', 'still'),
    obj('Node', 'other-annotation', { 'meshctl.dev/prune': 'enabled' }),
  ];
  const plan = planPrune(members, new Set(['Node/still']));
  assert.deepEqual(
    plan.delete.map((o) => `${o.kind}/${o.metadata.name}`),
    ['Assignment/x', 'Node/other-annotation'],
  );
  assert.deepEqual(
    plan.keep.map((o) => o.metadata.name),
    ['kept'],
  );
  assert.deepEqual(sortKinds(['Assignment', 'Node', 'Module', 'Node']), ['Node', 'Module', 'Assignment']);
});

test('the safety rails: no prune after a manifest problem, none of an empty set of manifests without --allow-empty', () => {
  const plan = { delete: [obj('Node', 'a'), obj('Node', 'b')], keep: [] };
  const opts = { objects: 0, problems: 0, allowEmpty: false, applySet: 's' };
  assert.throws(
    () => checkPrunable(plan, opts),
    /the manifests hold no objects, so all 2 of its members would be deleted/,
  );
  assert.doesNotThrow(() => checkPrunable(plan, { ...opts, allowEmpty: true }));
  assert.doesNotThrow(() => checkPrunable({ delete: [], keep: [] }, opts), 'nothing to delete: nothing to refuse');
  assert.throws(
    () => checkPrunable(plan, { ...opts, objects: 3, problems: 1, allowEmpty: true }),
    /1 manifest problem/,
  );
  assert.doesNotThrow(() => checkPrunable(plan, { ...opts, objects: 3 }));
});
