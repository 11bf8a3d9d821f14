import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Assignment, Declaration, Mesh, Node } from '../api/v1alpha1/generated/index.ts';
import { OWNERS_ANNOTATION } from '../api/v1alpha1/owner-records.ts';
import {
  assignmentRenderInputsChanged,
  declarationRenderInputsChanged,
  meshSpecChanged,
  nodeRenderInputsChanged,
} from './render-inputs.ts';

const node: Node = {
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name: 'a', uid: 'u1', generation: 1, resourceVersion: '5' },
  spec: { site: 's1', endpoint: '198.18.0.1:51820' },
  status: { lastSeen: '2026-12-01T20:00:00Z' },
};

test('a heartbeat queues no re-render; a spec, overlay or deletion change, an add or a delete does', () => {
  const beat: Node = {
    ...node,
    metadata: { ...node.metadata, resourceVersion: '6' },
    status: { lastSeen: '2026-12-01T20:00:10Z' },
  };
  assert.equal(nodeRenderInputsChanged('MODIFIED', beat, node), false, 'heartbeat');
  const spec: Node = {
    ...node,
    metadata: { ...node.metadata, generation: 2 },
    spec: { ...node.spec, httpsPort: 8443 },
  };
  assert.equal(nodeRenderInputsChanged('MODIFIED', spec, node), true, 'spec (generation)');
  const key: Node = { ...node, status: { ...node.status, overlay: { publicKey: `${'A'.repeat(43)}=` } } };
  assert.equal(nodeRenderInputsChanged('MODIFIED', key, node), true, 'overlay key');
  const deleting: Node = { ...node, metadata: { ...node.metadata, deletionTimestamp: '2026-12-01T20:01:00Z' } };
  assert.equal(nodeRenderInputsChanged('MODIFIED', deleting, node), true, 'deletion');
  assert.equal(nodeRenderInputsChanged('DELETED', node, node), true, 'deleted');
  assert.equal(nodeRenderInputsChanged('ADDED', node, undefined), true, 'added');
});

test("an agent's status report queues no re-render; a change of spec or owner records does", () => {
  const decl: Declaration = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'a', generation: 3, annotations: { [OWNERS_ANNOTATION]: '{}' } },
    spec: { generation: 2, resources: [] },
  };
  const reported: Declaration = { ...decl, status: { observedGeneration: 3, receivedGeneration: 2 } };
  assert.equal(declarationRenderInputsChanged('MODIFIED', reported, decl), false, 'status report');
  const owners: Declaration = { ...decl, metadata: { ...decl.metadata, annotations: {} } };
  assert.equal(declarationRenderInputsChanged('MODIFIED', owners, decl), true, 'owner records');
  const spec: Declaration = { ...decl, metadata: { ...decl.metadata, generation: 4 } };
  assert.equal(declarationRenderInputsChanged('MODIFIED', spec, decl), true, 'spec (generation)');
  assert.equal(declarationRenderInputsChanged('DELETED', decl, decl), true, 'deleted');
});

test("an Assignment's status queues no re-render; its spec, deletion, an add or a delete does", () => {
  const a: Assignment = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Assignment',
    metadata: { name: 'web-a', uid: 'u2', generation: 1, resourceVersion: '7' },
    spec: { module: 'web', node: 'a' },
  };
  const pending: Assignment = {
    ...a,
    metadata: { ...a.metadata, resourceVersion: '8' },
    status: { observedGeneration: 1, version: '1.0.1', conditions: [] },
  };
  assert.equal(assignmentRenderInputsChanged('MODIFIED', pending, a), false, 'status');
  const pinned: Assignment = { ...a, spec: { ...a.spec, version: '1.0.0' } };
  assert.equal(assignmentRenderInputsChanged('MODIFIED', pinned, a), true, 'spec, same generation');
  const moved: Assignment = { ...a, metadata: { ...a.metadata, generation: 2 }, spec: { ...a.spec, node: 'b' } };
  assert.equal(assignmentRenderInputsChanged('MODIFIED', moved, a), true, 'moved');
  const deleting: Assignment = { ...a, metadata: { ...a.metadata, deletionTimestamp: '2026-12-01T20:01:00Z' } };
  assert.equal(assignmentRenderInputsChanged('MODIFIED', deleting, a), true, 'deletion');
  assert.equal(assignmentRenderInputsChanged('DELETED', a, a), true, 'deleted');
  assert.equal(assignmentRenderInputsChanged('ADDED', a, undefined), true, 'added');
  assert.equal(assignmentRenderInputsChanged('MODIFIED', a, undefined), true, 'no old object');
});

test("the recovery clock's Mesh status write is no Mesh news; a spec change, deletion, an add or a delete is", () => {
  const mesh: Mesh = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Mesh',
    metadata: { name: 'mesh', uid: 'u3', generation: 1, resourceVersion: '9' },
    spec: { reachabilityGracePeriod: '40s' },
    status: { outageBudgetSeconds: 600 },
  };
  const ticked: Mesh = {
    ...mesh,
    metadata: { ...mesh.metadata, resourceVersion: '10' },
    status: { outageBudgetSeconds: 540 },
  };
  assert.equal(meshSpecChanged('MODIFIED', ticked, mesh), false, 'status only');
  const grace: Mesh = {
    ...mesh,
    metadata: { ...mesh.metadata, generation: 2 },
    spec: { reachabilityGracePeriod: '20s' },
  };
  assert.equal(meshSpecChanged('MODIFIED', grace, mesh), true, 'spec');
  const port: Mesh = { ...mesh, spec: { ...mesh.spec, overlay: { port: 51999 } } };
  assert.equal(meshSpecChanged('MODIFIED', port, mesh), true, 'spec, same generation');
  const deleting: Mesh = { ...mesh, metadata: { ...mesh.metadata, deletionTimestamp: '2026-12-01T20:01:00Z' } };
  assert.equal(meshSpecChanged('MODIFIED', deleting, mesh), true, 'deletion');
  assert.equal(meshSpecChanged('ADDED', mesh, undefined), true, 'added');
  assert.equal(meshSpecChanged('DELETED', mesh, mesh), true, 'deleted');
  assert.equal(meshSpecChanged('MODIFIED', mesh, mesh), true, 'a resync (the same object)');
});
