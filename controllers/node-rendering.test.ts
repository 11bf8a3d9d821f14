import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectCache } from '../api/client/object-cache.ts';
import type { Assignment, Declaration, Mesh, Module, Node, Route } from '../api/v1alpha1/generated/index.ts';
import { renderDeclaration } from '../api/v1alpha1/render-declaration.ts';
import { hubOf, renderOverlay } from '../api/v1alpha1/overlay.ts';
import { addCacheIndexes } from './cache-indexes.ts';
import { renderNode } from './node-rendering.ts';

// renderNode reads one node's objects through the indexes: the same rendering as from every object, without
// a scan of the Nodes or Assignments (a scan per node made a change to all N nodes cost O(N²)).

const API = 'meshctl.dev/v1alpha1';
let n = 0;
const node = (name: string, site: string): Node => ({
  apiVersion: API,
  kind: 'Node',
  metadata: { name },
  spec: { site, endpoint: `198.18.0.${++n}:51820` },
  status: { overlay: { address: `100.64.0.${n}`, publicKey: `${String(n).padStart(42, 'A')}A=` } },
});
const asg = (name: string, module: string, on: string): Assignment => ({
  apiVersion: API,
  kind: 'Assignment',
  metadata: { name, creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { module, node: on },
});
const mod = (name: string): Module => ({
  apiVersion: API,
  kind: 'Module',
  metadata: { name },
  spec: { version: '1.0.0', resources: [{ id: 'f', kind: 'File', spec: { path: `/srv/${name}`, content: name } }] },
});

function world() {
  const nodes = [node('hub', 'dc'), node('a', 's1'), node('b', 's1'), node('c', 's2')];
  const assignments = [asg('overlay-hub', 'overlay-hub', 'hub'), asg('web-a', 'web', 'a'), asg('db-c', 'db', 'c')];
  const modules = [mod('web'), mod('db'), mod('overlay-hub')];
  const caches = {
    nodes: new ObjectCache<Node>(),
    assignments: new ObjectCache<Assignment>(),
    modules: new ObjectCache<Module>(),
    declarations: new ObjectCache<Declaration>(),
    meshes: new ObjectCache<Mesh>(),
    routes: new ObjectCache<Route>(),
  };
  addCacheIndexes(caches);
  caches.nodes.replace(nodes);
  caches.assignments.replace(assignments);
  caches.modules.replace(modules);
  return { nodes, assignments, modules, caches };
}

/** What the controllers rendered before the indexes: from every Node and Assignment. */
function fromEverything(name: string, w: ReturnType<typeof world>) {
  const hub = hubOf(w.assignments);
  return renderDeclaration({
    node: name,
    assignments: w.assignments,
    modules: new Map(w.modules.map((m) => [m.metadata.name ?? '', m])),
    overlay: renderOverlay({ node: name, nodes: w.nodes, hub, mesh: undefined }),
  });
}

test("a node's rendering reads only its own objects, and equals the rendering from every object", () => {
  const w = world();
  const noScan = (what: string) => () => assert.fail(`rendering a spoke listed every ${what}`);
  const caches = {
    ...w.caches,
    nodes: Object.assign(Object.create(w.caches.nodes) as ObjectCache<Node>, { list: noScan('Node') }),
  };
  for (const name of ['a', 'b', 'c']) {
    const got = renderNode(name, caches);
    assert.ok(got, `${name} renders`);
    assert.deepEqual(got.rendering, fromEverything(name, w), `${name}: same rendering`);
  }
  const peers = renderNode('a', caches)!.rendering.spec.resources.find((r) => r.kind === 'WireGuard');
  assert.deepEqual(
    peers?.kind === 'WireGuard' ? peers.spec.peers?.map((p) => p.node) : [],
    ['b', 'hub'],
    'a spoke peers with its site and the hub',
  );
  assert.deepEqual(renderNode('hub', w.caches)!.rendering, fromEverything('hub', w), 'the hub: from every node');
  assert.equal(renderNode('nowhere', caches), undefined);
});
