/**
 * The Node controller's declaration verdict against the real API server and store: the desired generation comes
 * from the Declaration, the applied one from the agent or the Declaration status, and `nextNodeStatus` keeps what
 * the agent reported. The reachability and lease tests are in node-controller.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rfc3339 } from '../api/meta/timestamp.ts';
import type { NodeStatus } from '../api/v1alpha1/generated/index.ts';
import { eventually } from '../test/eventually.ts';
import { nextNodeStatus } from './node-controller.ts';
import { nodeControllerTesting, T0 } from './node-controller-testing.ts';

const iso = rfc3339;
const { suite, startController, quiet, statusOf, waitCondition, heartbeat, createNode } = nodeControllerTesting();

test('desired generation comes from the Declaration; the node is pending until it applied it', async (t) => {
  await startController(t);
  await createNode('busy');
  await heartbeat('busy', 1);
  const none = await waitCondition('busy', 'DeclarationApplied', 'Unknown', 'NoDeclaration');
  assert.deepEqual(none.declaration, { appliedGeneration: 1 });

  const decl = await suite.client.create('declarations', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'busy' },
    spec: { generation: 3, resources: [] },
  });
  const pending = await waitCondition('busy', 'DeclarationApplied', 'False', 'Pending');
  assert.deepEqual(pending.declaration, { appliedGeneration: 1, desiredGeneration: 3 });
  assert.equal(
    pending.conditions?.find((c) => c.type === 'DeclarationApplied')?.message,
    'declaration generation 3 is pending: the node last applied generation 1',
  );

  await suite.client.updateStatus('declarations', {
    ...decl,
    status: {
      observedGeneration: decl.metadata.generation,
      appliedGeneration: 1,
      conditions: [
        {
          type: 'Applied',
          status: 'False',
          reason: 'NotApplied',
          message: '1 of 1 resources not applied: web/conf Failed: EACCES',
          lastTransitionTime: iso(T0),
        },
      ],
    },
  });
  const failed = await waitCondition('busy', 'DeclarationApplied', 'False', 'NotApplied');
  assert.match(
    failed.conditions!.find((c) => c.type === 'DeclarationApplied')!.message,
    /generation 3 did not apply .*EACCES/,
  );

  await heartbeat('busy', 3);
  const applied = await waitCondition('busy', 'DeclarationApplied', 'True', 'Applied');
  assert.deepEqual(applied.declaration, { appliedGeneration: 3, desiredGeneration: 3 });
});

test("the Declaration status's applied generation reaches the Node without a heartbeat, and the next heartbeat then costs no write", async (t) => {
  const { writes } = await startController(t);
  await createNode('quick');
  await heartbeat('quick', 1);
  const decl = await suite.client.create('declarations', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'quick' },
    spec: { generation: 2, resources: [] },
  });
  await waitCondition('quick', 'DeclarationApplied', 'False', 'Pending');
  // The agent's report after applying generation 2: on the Declaration only.
  await suite.client.updateStatus('declarations', {
    ...decl,
    status: { observedGeneration: decl.metadata.generation, receivedGeneration: 2, appliedGeneration: 2 },
  });
  const applied = await waitCondition('quick', 'DeclarationApplied', 'True', 'Applied');
  assert.deepEqual(applied.declaration, { appliedGeneration: 2, desiredGeneration: 2 });
  // Its next heartbeat says the same: the Node is written again only for the new contact time (none of this
  // controller's fields change), and a heartbeat still carrying generation 1 does not move it back.
  const before = writes('quick');
  await heartbeat('quick', 2);
  await quiet();
  assert.equal(writes('quick'), before, 'a heartbeat repeating the applied generation costs the controller no write');
  await heartbeat('quick', 1);
  const kept = await eventually(async () => {
    const s = await statusOf('quick');
    assert.equal(s.declaration?.appliedGeneration, 2, `applied generation: ${JSON.stringify(s.declaration)}`);
    return s;
  });
  assert.equal(kept.conditions?.find((c) => c.type === 'DeclarationApplied')?.status, 'True');
});

test("nextNodeStatus sets only the controller's fields and keeps what the agent reported", () => {
  const agent = {
    controlPlaneLastContact: '1999-01-01T00:00:00.000Z',
    agentVersion: '0.1.0',
    overlay: { address: '100.64.0.2' },
  };
  const before: NodeStatus = {
    ...agent,
    reachable: true,
    since: '2030-01-01T00:00:00Z',
    declaration: { desiredGeneration: 2, appliedGeneration: 2 },
  };
  const next = nextNodeStatus(before, {
    generation: 4,
    now: '2030-01-01T00:01:00Z',
    lastSeen: '2030-01-01T00:00:10Z',
    reachable: { status: 'Unknown', reason: 'NeverSeen', message: 'm' },
    declaration: { status: 'Unknown', reason: 'NoDeclaration', message: 'n' },
  });
  assert.deepEqual(
    next,
    {
      ...agent,
      observedGeneration: 4,
      since: '2030-01-01T00:01:00Z',
      lastSeen: '2030-01-01T00:00:10Z',
      declaration: { appliedGeneration: 2 },
      conditions: [
        {
          type: 'Reachable',
          status: 'Unknown',
          reason: 'NeverSeen',
          message: 'm',
          lastTransitionTime: '2030-01-01T00:01:00Z',
        },
        {
          type: 'DeclarationApplied',
          status: 'Unknown',
          reason: 'NoDeclaration',
          message: 'n',
          lastTransitionTime: '2030-01-01T00:01:00Z',
        },
      ],
    },
    'no reachable field while Unknown; no desiredGeneration without a Declaration',
  );
  assert.deepEqual(Object.keys(next), [
    'observedGeneration',
    'since',
    'lastSeen',
    'declaration',
    'controlPlaneLastContact',
    'agentVersion',
    'overlay',
    'conditions',
  ]);
});
