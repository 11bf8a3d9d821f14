/**
 * The Assignment controller against the real API server and store (controllers-harness.ts): its Applied
 * condition follows what the node's agent reports in the Declaration's status.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../eventually.ts';
import {
  controllersSuite,
  controllerWrites,
  client,
  stateWrites,
  API,
  dir,
  file,
  put,
  node,
  mod,
  assign,
  getDecl,
  getAsg,
  waitReason,
  agentReports,
  churn,
} from './controllers-harness.ts';

controllersSuite();

test("reconciling an unchanged world writes nothing; the agent's report makes the assignment Applied", async () => {
  await mod('n-mod', '1.0.0', [dir('dir', '/srv/n')]);
  await node('n-node');
  await assign('n-asg', { module: 'n-mod', node: 'n-node' });
  await waitReason('n-asg', 'Pending');
  const before = await getDecl('n-node');
  const mark = controllerWrites.length;
  await churn('n-node', 'n-mod', 'n-asg', '1');
  // The agent's status write carries the resourceVersion read before the churn: a controller write would make it 409.
  const reported = await agentReports('n-node', () => ({ state: 'Applied' }), before);
  const done = await waitReason('n-asg', 'Applied');
  assert.equal(done.status?.conditions?.[0]?.status, 'True');
  const after = await getDecl('n-node');
  assert.equal(after.spec.generation, before.spec.generation);
  assert.equal(after.metadata.generation, before.metadata.generation);
  assert.equal(
    after.metadata.resourceVersion,
    reported.metadata.resourceVersion,
    'only the agent wrote the declaration',
  );
  assert.deepEqual(stateWrites(mark), ['updateStatus assignments/n-asg'], 'one write: the Applied status');
  // Once Applied, more churn leaves the assignment and the declaration alone too. The sentinel's status
  // (written by a reconcile of the same node that ran after the churn) shows the controller looked.
  const mark2 = controllerWrites.length;
  await churn('n-node', 'n-mod', 'n-asg', '2');
  await assign('n-sentinel', { module: 'n-none', node: 'n-node' });
  await waitReason('n-sentinel', 'ModuleNotFound');
  assert.deepEqual(stateWrites(mark2), ['updateStatus assignments/n-sentinel']);
});

test('a version-only module change is a new generation; "applied … version X" waits for the node to report it', async () => {
  const resources = [dir('dir', '/srv/o'), file('conf', '/srv/o/conf', 'same', ['dir'])];
  await mod('o-mod', '1.0.0', resources);
  await node('o-node');
  await assign('o-asg', { module: 'o-mod', node: 'o-node' });
  await waitReason('o-asg', 'Pending');
  await agentReports('o-node', () => ({ state: 'Applied' }));
  const v1 = await waitReason('o-asg', 'Applied');
  assert.equal(v1.status?.conditions?.[0]?.message, 'node "o-node" applied all 2 resources of version 1.0.0');
  const g1 = (await getDecl('o-node')).spec.generation;

  await client.patch('modules', 'o-mod', { spec: { version: '1.1.0' } });
  // The node has not reported since: the assignment names the new version, and says the node has yet to store it.
  const before = await eventually(async () => {
    const a = await getAsg('o-asg');
    assert.equal(a.status?.version, '1.1.0', JSON.stringify(a.status));
    return a;
  });
  const pending = before.status?.conditions?.find((c) => c.type === 'Applied');
  assert.equal(pending?.reason, 'Pending');
  assert.equal(
    pending?.message,
    `node "o-node" has not yet stored declaration generation ${g1 + 1} (it holds generation ${g1})`,
  );
  const d2 = await getDecl('o-node');
  assert.equal(d2.spec.generation, g1 + 1, 'the version is delivered in a new generation');
  assert.deepEqual(
    d2.spec.resources.map((r) => r.version),
    ['1.1.0', '1.1.0'],
  );

  // Stored but not yet applied (the agent acknowledges with every result Pending): still not applied.
  const received = d2.spec.resources.map((r) => ({ id: r.id, state: 'Pending' as const }));
  await client.updateStatus('declarations', {
    ...d2,
    status: { observedGeneration: d2.metadata.generation, receivedGeneration: d2.spec.generation, results: received },
  });
  const stored = await eventually(async () => {
    const a = await getAsg('o-asg');
    assert.match(a.status?.conditions?.[0]?.message ?? '', /has applied 0 of 2 resources/);
    return a;
  });
  assert.equal(stored.status?.conditions?.[0]?.reason, 'Pending');

  await agentReports('o-node', () => ({ state: 'Applied' }));
  await eventually(async () =>
    assert.equal(
      (await getAsg('o-asg')).status?.conditions?.[0]?.message,
      'node "o-node" applied all 2 resources of version 1.1.0',
    ),
  );
});

test('a failed resource makes the assignment Applied=False, Failed, naming the resource and the error', async () => {
  await mod('f-mod', '1', [dir('dir', '/srv/f'), file('conf', '/srv/f/c', 'x', ['dir'])]);
  await node('f-node');
  await assign('f-asg', { module: 'f-mod', node: 'f-node' });
  await waitReason('f-asg', 'Pending');
  await agentReports('f-node', (id) =>
    id === 'f-asg/conf' ? { state: 'Failed', message: 'permission denied' } : { state: 'Applied' },
  );
  const a = await waitReason('f-asg', 'Failed');
  assert.equal(a.status?.conditions?.[0]?.status, 'False');
  assert.equal(
    a.status?.conditions?.[0]?.message,
    'resource "f-asg/conf" is Failed on node "f-node": permission denied',
  );
  await agentReports('f-node', () => ({ state: 'Applied' }));
  const ok = await waitReason('f-asg', 'Applied');
  assert.notEqual(ok.status?.conditions?.[0]?.lastTransitionTime, undefined);
});

test('a missing module or node is reported on the assignment, and recovers when it appears', async () => {
  await node('m-node');
  await assign('m-asg', { module: 'm-missing', node: 'm-node' });
  const missing = await waitReason('m-asg', 'ModuleNotFound');
  assert.equal(missing.status?.conditions?.[0]?.message, 'module "m-missing" not found');
  assert.deepEqual((await getDecl('m-node')).spec.resources, []);
  await mod('m-missing', '1', [dir('dir', '/srv/m')]);
  await eventually(async () =>
    assert.deepEqual(
      (await getDecl('m-node')).spec.resources.map((r) => r.id),
      ['m-asg/dir'],
    ),
  );
  await assign('m-orphan', { module: 'm-missing', node: 'm-nowhere' });
  assert.equal(
    (await waitReason('m-orphan', 'NodeNotFound')).status?.conditions?.[0]?.message,
    'node "m-nowhere" not found',
  );
  await node('m-nowhere');
  await eventually(async () =>
    assert.deepEqual(
      (await getDecl('m-nowhere')).spec.resources.map((r) => r.id),
      ['m-orphan/dir'],
    ),
  );
});

test("a node on the overlay: its assignment's status follows the Declaration as written, WireGuard resource and all", async () => {
  await mod('ov-mod', '1', [dir('dir', '/srv/o')]);
  await put('nodes', {
    apiVersion: API,
    kind: 'Node',
    metadata: { name: 'ov-node' },
    spec: { endpoint: '198.18.0.7:51820' },
  });
  await client.patch(
    'nodes',
    'ov-node',
    { status: { overlay: { address: '100.64.0.7', publicKey: `${'B'.repeat(42)}A=` } } },
    { subresource: 'status' },
  );
  await assign('ov-asg', { module: 'ov-mod', node: 'ov-node' });
  const d = await eventually(async () => {
    const got = await getDecl('ov-node');
    assert.deepEqual(
      got.spec.resources.map((r) => r.kind),
      ['Directory', 'WireGuard'],
    );
    return got;
  });
  await agentReports('ov-node', () => ({ state: 'Applied' }), d);
  const done = await waitReason('ov-asg', 'Applied');
  assert.match(done.status?.conditions?.[0]?.message ?? '', /applied all 1 resources of version 1/);
});
