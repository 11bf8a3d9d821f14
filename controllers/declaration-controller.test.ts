import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/meta/types.ts';
import type { Assignment, Declaration, Node } from '../api/v1alpha1/generated/index.ts';
import { OVERLAY_RESOURCE_ID } from '../api/v1alpha1/overlay.ts';
import { nodesOfAssignment, nodesOfModule, nodesOfNode } from './declaration-controller.ts';
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

test('a Node maps to itself, the hub, its site and the nodes that name it as a peer — the whole mesh only for the hub', () => {
  const n = (name: string, site: string): Node => ({
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name },
    spec: { site },
  });
  const nodes = [n('hub', 'dc'), n('a', 's1'), n('b', 's1'), n('c', 's2'), n('d', 's2'), n('e', 's3')];
  const wg = (peers: string[]): Declaration => ({
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'x' },
    spec: {
      generation: 1,
      resources: [
        {
          id: OVERLAY_RESOURCE_ID,
          owner: 'mesh-overlay',
          kind: 'WireGuard',
          spec: {
            interface: 'wg-mesh',
            address: '100.64.0.9/10',
            peers: peers.map((node) => ({ node, publicKey: 'A'.repeat(43) + '=', allowedIPs: [] })),
          },
        },
      ],
    },
  });
  // e's Declaration still names a (say a moved from s3 to s1): it is re-rendered too.
  const declarations = new Map([['e', wg(['a', 'hub'])]]);
  const caches = {
    nodes: { list: () => nodes },
    assignments: { list: () => [asg('overlay-hub', 'overlay-hub', 'hub')] },
    declarations: { get: (name: string) => declarations.get(name) },
  };
  assert.deepEqual(nodesOfNode(nodes[1], caches).sort(), ['a', 'b', 'e', 'hub']);
  assert.deepEqual(nodesOfNode(nodes[3], caches).sort(), ['c', 'd', 'hub']);
  assert.deepEqual(nodesOfNode(nodes[0], caches).sort(), ['a', 'b', 'c', 'd', 'e', 'hub']);
});
