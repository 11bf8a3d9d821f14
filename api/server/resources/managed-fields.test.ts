import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../meta/types.ts';
import { entriesAfterUpdate, fieldsOf, fromFieldsV1, toFieldsV1 } from './managed-fields.ts';
import { applyConfig } from './server-side-apply.ts';

const obj = (spec: Record<string, unknown>, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Module',
  metadata: { name: 'm', uid: 'u', ...(labels ? { labels } : {}) },
  spec,
  status: { x: 1 },
});

test('field sets: leaves of spec and labels only; FieldsV1 as kube writes it, and back', () => {
  const set = fieldsOf(obj({ version: '1', port: 80, resources: [{ id: 'a' }], env: {} }, { app: 'web' }));
  assert.deepEqual([...set].sort(), [
    '["metadata","labels","app"]',
    '["spec","env"]',
    '["spec","port"]',
    '["spec","resources"]',
    '["spec","version"]',
  ]);
  const v1 = toFieldsV1(set);
  assert.deepEqual(v1, {
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
    'f:spec': { '.': {}, 'f:env': {}, 'f:port': {}, 'f:resources': {}, 'f:version': {} },
  });
  assert.deepEqual([...fromFieldsV1(v1)].sort(), [...set].sort());
});

test("an update takes the fields it changes from every other manager; a removed field is nobody's", () => {
  const applied = applyConfig(undefined, obj({ version: '1', port: 80, description: 'd' }), 'alice', false);
  const entries = entriesAfterUpdate(applied, obj({ version: '2', description: 'd' }), 'bob');
  assert.deepEqual(
    entries.map((e) => [e.manager, e.operation, [...fromFieldsV1(e.fieldsV1)]]),
    [
      ['alice', 'Apply', ['["spec","description"]']],
      ['bob', 'Update', ['["spec","version"]']],
    ],
  );
  const tracked = { ...applied, metadata: { ...applied.metadata, managedFields: entries } } as KubeObject;
  const bare: KubeObject = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Module', metadata: { name: 'm' } };
  const again = entriesAfterUpdate(tracked, bare, 'bob');
  assert.deepEqual(again, [], 'removing every field leaves no entry');
});
