import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/meta/types.ts';
import type { Assignment } from '../api/v1alpha1/generated/index.ts';
import { nodesOfAssignment, nodesOfModule } from './declaration-controller.ts';
import { OWNERS_ANNOTATION } from '../api/v1alpha1/render-declaration.ts';

// The reconcile itself runs against the real server in test/e2e/declaration-controller.test.ts; these are
// the pure key mappings from changed objects to the nodes to re-render.

const asg = (name: string, module: string, node: string): Assignment => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Assignment',
  metadata: { name },
  spec: { module, node },
});

const decl = (name: string, owners: Record<string, unknown>): KubeObject => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Declaration',
  metadata: { name, annotations: { [OWNERS_ANNOTATION]: JSON.stringify(owners) } },
});

test('an assignment maps to its node and to every node whose declaration still records it', () => {
  const declarations = {
    list: () => [
      decl('old', { w: { version: '1', generation: 2 } }),
      decl('new', {}),
      decl('other', { x: { version: '1', generation: 1 } }),
    ],
  };
  assert.deepEqual(nodesOfAssignment(asg('w', 'web', 'new'), declarations), ['new', 'old']);
  assert.deepEqual(nodesOfAssignment(asg('w', 'web', 'old'), declarations), ['old']);
  assert.deepEqual(nodesOfAssignment(asg('z', 'web', 'nowhere'), declarations), ['nowhere']);
});

test('a module maps to the nodes of the assignments that use it, once each', () => {
  const assignments = {
    list: () => [asg('a', 'web', 'n1'), asg('b', 'web', 'n2'), asg('c', 'web', 'n1'), asg('d', 'db', 'n3')],
  };
  assert.deepEqual(nodesOfModule('web', assignments), ['n1', 'n2']);
  assert.deepEqual(nodesOfModule('none', assignments), []);
});
