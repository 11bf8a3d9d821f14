import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../api/v1alpha1/generated/index.ts';
import { overlayPathRows } from './describe-node.ts';

const K = 'A'.repeat(43) + '=';
const node = (name: string, site: string, endpoint = true): Node => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name },
  spec: { site, ...(endpoint ? { endpoint: `198.18.0.1:51820` } : {}) },
  status: { overlay: { address: '100.64.0.9', publicKey: K } },
});

test('describe node: each overlay path is direct or through the hub, with what the hub being down does to it', () => {
  const nodes = [
    node('hub', 'dc'),
    node('a', 'site1'),
    node('b', 'site1'),
    node('c', 'site2'),
    node('d', 'site2', false),
  ];
  assert.deepEqual(overlayPathRows(nodes[1], nodes, 'hub'), [
    ['hub', 'dc', 'direct (the hub)', 'down with the hub'],
    ['b', 'site1', 'direct (same site)', 'keeps working'],
    ['c', 'site2', 'through the hub "hub"', 'stops while the hub is down'],
  ]);
  assert.deepEqual(
    overlayPathRows(nodes[0], nodes, 'hub').map((r) => r[2]),
    ['direct (this node is the hub)', 'direct (this node is the hub)', 'direct (this node is the hub)'],
  );
  assert.equal(overlayPathRows(nodes[3], nodes, undefined)[0]?.[2], 'none (no hub is assigned)');
});
