import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import type { DeclaredResource, Node, WireGuardSpec } from './generated/index.ts';
import { generateKeyPairSync } from 'node:crypto';
import { overlayNodesAffected, overlayPeerNames, overlaySpec, pathBetween, renderOverlay } from './overlay.ts';

const key = (): string =>
  generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');

let n = 0;
function node(name: string, site?: string, opts: { endpoint?: boolean } = {}): Node {
  n++;
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name },
    spec: { ...(site ? { site } : {}), ...(opts.endpoint === false ? {} : { endpoint: `198.18.0.${n}:51820` }) },
    status: { overlay: { address: `100.64.0.${n}`, publicKey: key() } },
  };
}

const spec = (name: string, nodes: Node[], hub?: string): WireGuardSpec | undefined =>
  overlaySpec({ node: name, nodes, hub, mesh: undefined });

test('overlay: the hub peers with every node and forwards; a spoke peers with the hub and its own site', () => {
  const nodes = [node('hub', 'dc'), node('a', 's1'), node('b', 's1'), node('c', 's2')];
  const hub = spec('hub', nodes, 'hub')!;
  assert.equal(hub.forward, true);
  assert.deepEqual(
    hub.peers!.map((p) => [p.node, p.allowedIPs]),
    [
      ['a', [`${nodes[1].status!.overlay!.address}/32`]],
      ['b', [`${nodes[2].status!.overlay!.address}/32`]],
      ['c', [`${nodes[3].status!.overlay!.address}/32`]],
    ],
  );
  assert.ok(
    hub.peers!.every((p) => p.endpoint && p.persistentKeepalive === 25),
    'the hub knows endpoints and keeps alive',
  );
  const a = spec('a', nodes, 'hub')!;
  assert.equal(a.forward, undefined);
  assert.equal(a.address, `${nodes[1].status!.overlay!.address}/10`);
  assert.deepEqual(
    a.peers!.map((p) => [p.node, p.allowedIPs]),
    [
      ['b', [`${nodes[2].status!.overlay!.address}/32`]],
      ['hub', ['100.64.0.0/10']],
    ],
  );
  assert.deepEqual(
    spec('c', nodes, 'hub')!.peers!.map((p) => p.node),
    ['hub'],
  );
  assert.equal(pathBetween(nodes[1], nodes[2], 'hub'), 'direct');
  assert.equal(pathBetween(nodes[1], nodes[3], 'hub'), 'hub');
  assert.equal(pathBetween(nodes[0], nodes[3], 'hub'), 'direct');
});

test("overlay: a node without an endpoint, address or key is not on the overlay and is nobody's peer", () => {
  const nodes = [node('hub', 'dc'), node('a', 's1', { endpoint: false }), node('b', 's1')];
  assert.equal(spec('a', nodes, 'hub'), undefined);
  assert.deepEqual(
    spec('hub', nodes, 'hub')!.peers!.map((p) => p.node),
    ['b'],
  );
  assert.deepEqual(
    spec('b', nodes, 'hub')!.peers!.map((p) => p.node),
    ['hub'],
  );
  assert.deepEqual(spec('b', nodes, undefined)!.peers, [], 'without a hub a lone node has no peers');
});

/** Renders every node's overlay resource; returns them by node. */
function renderAll(nodes: Node[], hub: string): Map<string, DeclaredResource | undefined> {
  return new Map(
    nodes.map((x) => [x.metadata.name!, renderOverlay({ node: x.metadata.name!, nodes, hub, mesh: undefined })]),
  );
}

function changedBetween(before: Map<string, unknown>, after: Map<string, unknown>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((k) => !isDeepStrictEqual(before.get(k), after.get(k))).sort();
}

test("overlay: a node joining or leaving changes only the hub's and its site's declarations (O(site))", () => {
  const nodes = [node('hub', 'dc')];
  for (const site of ['s1', 's2', 's3', 's4']) for (let i = 0; i < 5; i++) nodes.push(node(`${site}-n${i}`, site));
  const before = renderAll(nodes, 'hub');
  const joined = node('s2-new', 's2');
  const withNew = [...nodes, joined];
  const after = renderAll(withNew, 'hub');
  const expected = ['hub', 's2-n0', 's2-n1', 's2-n2', 's2-n3', 's2-n4', 's2-new'];
  assert.deepEqual(changedBetween(before, after), expected, '6 of 22 declarations change, not all of them');
  // The Declarations as stored while the new node is a member: its peers are named in them.
  const peersOf = (x: string): string[] => overlayPeerNames([after.get(x)].filter((r) => r !== undefined));
  const affected = (all: Node[]): string[] =>
    overlayNodesAffected({
      changed: joined,
      hub: 'hub',
      all: () => all.map((n) => n.metadata.name ?? ''),
      atSite: (site) => all.filter((n) => n.spec?.site === site),
      naming: (name) => all.map((n) => n.metadata.name ?? '').filter((n) => peersOf(n).includes(name)),
    }).sort();
  assert.deepEqual(affected(withNew), expected);
  // Leaving: the same set, found from the Declarations that still name it.
  const left = renderAll(nodes, 'hub');
  assert.deepEqual(changedBetween(after, left), expected);
  assert.deepEqual(affected(nodes), expected);
});

test('overlay: moving the hub changes every declaration', () => {
  const nodes = [node('hub', 'dc'), node('a', 's1'), node('b', 's1'), node('c', 's2'), node('d', 's3')];
  const moved = changedBetween(renderAll(nodes, 'hub'), renderAll(nodes, 'd'));
  assert.deepEqual(moved, ['a', 'b', 'c', 'd', 'hub']);
  assert.deepEqual(
    spec('c', nodes, 'd')!.peers!.map((p) => [p.node, p.allowedIPs[0]]),
    [['d', '100.64.0.0/10']],
  );
  // A hub at the spoke's own site is still its route to the rest of the overlay.
  const a = spec('a', nodes, 'b')!;
  assert.deepEqual(
    a.peers!.map((p) => [p.node, p.allowedIPs[0]]),
    [['b', '100.64.0.0/10']],
  );
});
