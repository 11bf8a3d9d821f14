import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/meta/types.ts';
import type { Assignment, Declaration, Node } from '../api/v1alpha1/generated/index.ts';
import { OVERLAY_RESOURCE_ID } from '../api/v1alpha1/overlay.ts';
import { nodesOfAssignment, nodesOfModule, nodesOfNode } from './declaration-controller.ts';
import { OWNERS_ANNOTATION } from '../api/v1alpha1/owner-records.ts';
import { ObjectCache } from '../api/client/object-cache.ts';
import { addCacheIndexes } from './cache-indexes.ts';

// The reconcile itself runs against the real server in test/e2e/declaration-controller.test.ts; these are
// the pure key mappings from changed objects to the nodes to re-render, over real caches with the controllers'
// indexes (cache-indexes.ts).

/** Indexed caches holding the given objects. */
function caches(objs: { nodes?: Node[]; assignments?: Assignment[]; declarations?: KubeObject[] }) {
  const c = {
    nodes: new ObjectCache<Node>(),
    assignments: new ObjectCache<Assignment>(),
    declarations: new ObjectCache<Declaration>(),
  };
  addCacheIndexes(c);
  c.nodes.replace(objs.nodes ?? []);
  c.assignments.replace(objs.assignments ?? []);
  c.declarations.replace((objs.declarations ?? []) as Declaration[]);
  return c;
}

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
  const { declarations } = caches({
    declarations: [
      decl('old', { w: { version: '1', generation: 2 } }),
      decl('new', {}),
      decl('other', { x: { version: '1', generation: 1 } }),
    ],
  });
  assert.deepEqual(nodesOfAssignment(asg('w', 'web', 'new'), declarations), ['new', 'old']);
  assert.deepEqual(nodesOfAssignment(asg('w', 'web', 'old'), declarations), ['old']);
  assert.deepEqual(nodesOfAssignment(asg('z', 'web', 'nowhere'), declarations), ['nowhere']);
});

test('a module maps to the nodes of the assignments that use it, once each', () => {
  const { assignments } = caches({
    assignments: [asg('a', 'web', 'n1'), asg('b', 'web', 'n2'), asg('c', 'web', 'n1'), asg('d', 'db', 'n3')],
  });
  assert.deepEqual(nodesOfModule('web', assignments), ['n1', 'n2']);
  assert.deepEqual(nodesOfModule('none', assignments), []);
});

test('a Node maps to itself, the hub, its site and the nodes that name it as a peer — the whole mesh only for the hub', () => {
  let i = 0;
  const n = (name: string, site: string): Node => ({
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name },
    spec: { site, endpoint: `198.18.0.${++i}:51820` },
    status: { overlay: { address: `100.64.0.${i}`, publicKey: `${'A'.repeat(42)}${i}=` } },
  });
  const nodes = [n('hub', 'dc'), n('a', 's1'), n('b', 's1'), n('c', 's2'), n('d', 's2'), n('e', 's3')];
  const wg = (name: string, peers: string[]): Declaration => ({
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name },
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
  const c = caches({
    nodes,
    assignments: [asg('overlay-hub', 'overlay-hub', 'hub')],
    declarations: [wg('e', ['a', 'hub'])],
  });
  assert.deepEqual(nodesOfNode(nodes[1], c).sort(), ['a', 'b', 'e', 'hub']);
  assert.deepEqual(nodesOfNode(nodes[3], c).sort(), ['c', 'd', 'hub']);
  assert.deepEqual(nodesOfNode(nodes[0], c).sort(), ['a', 'b', 'c', 'd', 'e', 'hub']);
  // A heartbeat (status only, overlay part unchanged) re-renders the node alone, even the hub — not its site.
  const beat = (x: Node): Node => ({ ...x, status: { ...x.status, lastSeen: '2026-12-01T20:00:00Z' } });
  assert.deepEqual(nodesOfNode(beat(nodes[1]), c, nodes[1]), ['a']);
  assert.deepEqual(nodesOfNode(beat(nodes[0]), c, nodes[0]), ['hub']);
  // A new endpoint is an overlay change: its site and the hub too.
  const moved: Node = { ...nodes[1], spec: { ...nodes[1].spec, endpoint: '198.18.0.9:51820' } };
  assert.deepEqual(nodesOfNode(moved, c, nodes[1]).sort(), ['a', 'b', 'e', 'hub']);
  // Off the overlay before and after (an address but no key yet): nobody's peer, only those still naming it.
  const keyless = (x: Node): Node => ({ ...x, status: { overlay: { address: x.status?.overlay?.address } } });
  const addressed: Node = { ...keyless(nodes[1]), status: { overlay: { address: '100.64.0.99' } } };
  assert.deepEqual(nodesOfNode(addressed, c, keyless(nodes[1])).sort(), ['a', 'e']);
  assert.deepEqual(nodesOfNode(keyless(nodes[3]), c).sort(), ['c'], 'a new node off the overlay');
});
