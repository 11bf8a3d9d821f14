/**
 * The Assignment controller against the real API server and store (in-process, port 0), through the real
 * HTTP client, run by the controller manager on a FakeClock (lastTransitionTime is the controller's time).
 * It runs alone: the tests write the Declaration as the Declaration controller would (rendered from the
 * same pure functions) and its status as the node's agent would.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '../api/client/types.ts';
import { findCondition } from '../api/meta/conditions.ts';
import { silentLogger } from '../api/meta/logger.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { Assignment, Declaration } from '../api/v1alpha1/generated/index.ts';
import { declarationToWrite, renderDeclaration } from '../api/v1alpha1/render-declaration.ts';
import { serverSuite } from '../test/server-suite.ts';
import { ObjectCache } from '../api/client/object-cache.ts';
import { BY_MODULE, BY_NODE } from './cache-indexes.ts';
import { assignmentsOfModule, assignmentsOfNode, createAssignmentController } from './assignment-controller.ts';
import { FakeClock } from '../api/meta/fake-clock.ts';
import { createManager } from './runtime/manager.ts';
import { eventually } from '../test/eventually.ts';
import { rfc3339 } from '../api/meta/timestamp.ts';

const API = 'meshctl.dev/v1alpha1';
const T0 = Date.parse('2030-01-01T00:00:00Z');
const iso = rfc3339;

const suite = serverSuite();

/** A running Assignment controller on a fake clock; `writes(name)` counts the status writes it sent for an assignment. */
async function startController(t: TestContext): Promise<{ clock: FakeClock; writes: (name: string) => number }> {
  const clock = new FakeClock({ start: T0 });
  const sent: string[] = [];
  const recording: Client = {
    ...suite.client,
    updateStatus: (plural, obj, opts) => {
      sent.push(`${plural}/${obj.metadata.name}`);
      return suite.client.updateStatus(plural, obj, opts);
    },
  };
  const manager = createManager({ client: recording, logger: silentLogger, backoff: { baseMs: 20, maxMs: 200 } });
  manager.add(createAssignmentController({ manager, clock }));
  assert.equal(await manager.start(), true);
  t.after(() => manager.stop());
  return { clock, writes: (name) => sent.filter((s) => s === `assignments/${name}`).length };
}

const put = (plural: string, obj: object): Promise<KubeObject> => suite.client.create(plural, obj as KubeObject);
const getAsg = async (name: string): Promise<Assignment> => suite.client.get('assignments', name);

/** Waits until the assignment's Applied condition has `reason`; returns the assignment. */
async function waitReason(name: string, reason: string): Promise<Assignment> {
  return eventually(async () => {
    const a = await getAsg(name);
    assert.equal(findCondition(a.status?.conditions, 'Applied')?.reason, reason, JSON.stringify(a.status));
    return a;
  });
}

/** Renders and stores node `name`'s Declaration as the Declaration controller would. */
async function writeDeclaration(name: string): Promise<Declaration> {
  const node = await suite.client.get('nodes', name);
  const current = (await suite.client.list('declarations', { fieldSelector: `metadata.name=${name}` })).items[0] as
    Declaration | undefined;
  const assignments = (await suite.client.list('assignments')).items;
  const modules = new Map((await suite.client.list('modules')).items.map((m) => [m.metadata.name ?? '', m]));
  const rendering = renderDeclaration({ node: name, assignments, modules, current });
  const next = declarationToWrite({ node, rendering, current });
  if (!next) return current!;
  return (current ? await suite.client.update('declarations', next) : await put('declarations', next)) as Declaration;
}

test("Applied follows the node's Declaration status, at the controller's time, written once per change", async (t) => {
  const { clock, writes } = await startController(t);
  await put('modules', {
    apiVersion: API,
    kind: 'Module',
    metadata: { name: 'a-mod' },
    spec: { version: '1.0.0', resources: [{ id: 'dir', kind: 'Directory', spec: { path: '/srv/a' } }] },
  });
  await put('assignments', {
    apiVersion: API,
    kind: 'Assignment',
    metadata: { name: 'a-asg' },
    spec: { module: 'a-mod', node: 'a-node' },
  });
  const orphan = await waitReason('a-asg', 'NodeNotFound');
  assert.equal(findCondition(orphan.status?.conditions, 'Applied')?.lastTransitionTime, iso(T0));

  clock.advance(60_000);
  await put('nodes', { apiVersion: API, kind: 'Node', metadata: { name: 'a-node' } });
  const decl = await writeDeclaration('a-node');
  const pending = await waitReason('a-asg', 'Pending');
  assert.equal(pending.status?.version, '1.0.0');
  assert.equal(
    findCondition(pending.status?.conditions, 'Applied')?.message,
    'node "a-node" has not yet stored declaration generation 1',
  );
  assert.equal(
    findCondition(pending.status?.conditions, 'Applied')?.lastTransitionTime,
    iso(T0),
    'False → False is no transition',
  );

  clock.advance(60_000);
  const results = decl.spec.resources.map((r) => ({ id: r.id, state: 'Applied' as const }));
  await suite.client.updateStatus('declarations', {
    ...decl,
    status: { observedGeneration: decl.metadata.generation, results },
  });
  const done = await waitReason('a-asg', 'Applied');
  assert.deepEqual(findCondition(done.status?.conditions, 'Applied'), {
    type: 'Applied',
    status: 'True',
    reason: 'Applied',
    message: 'node "a-node" applied all 1 resources of version 1.0.0',
    observedGeneration: 1,
    lastTransitionTime: iso(T0 + 120_000),
  });
  const count = writes('a-asg');
  await suite.client.patch('assignments', 'a-asg', { metadata: { labels: { touched: '1' } } });
  await suite.client.patch('nodes', 'a-node', { metadata: { labels: { touched: '1' } } });
  await put('assignments', {
    apiVersion: API,
    kind: 'Assignment',
    metadata: { name: 'a-sentinel' },
    spec: { module: 'none', node: 'a-node' },
  });
  await writeDeclaration('a-node');
  await waitReason('a-sentinel', 'ModuleNotFound');
  assert.equal(writes('a-asg'), count, 'nothing changed for it: no write');
});

test("nothing is written while the node's Declaration has yet to be rendered; a missing module is reported", async (t) => {
  const { writes } = await startController(t);
  await put('nodes', { apiVersion: API, kind: 'Node', metadata: { name: 'm-node' } });
  await put('assignments', {
    apiVersion: API,
    kind: 'Assignment',
    metadata: { name: 'm-asg' },
    spec: { module: 'm-mod', node: 'm-node' },
  });
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(writes('m-asg'), 0, 'no Declaration yet: the Declaration controller writes first');
  await writeDeclaration('m-node');
  const missing = await waitReason('m-asg', 'ModuleNotFound');
  assert.equal(findCondition(missing.status?.conditions, 'Applied')?.message, 'module "m-mod" not found');
  await put('modules', {
    apiVersion: API,
    kind: 'Module',
    metadata: { name: 'm-mod' },
    spec: { version: '2.0.0', resources: [{ id: 'd', kind: 'Directory', spec: { path: '/m' } }] },
  });
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(
    findCondition((await getAsg('m-asg')).status?.conditions, 'Applied')?.reason,
    'ModuleNotFound',
    "the module's resources are not in the Declaration yet",
  );
  await writeDeclaration('m-node');
  const pending = await waitReason('m-asg', 'Pending');
  assert.equal(pending.status?.version, '2.0.0');
  assert.equal(writes('m-asg'), 2);
});

test("each change of Applied (status or reason) is recorded as an Event about the assignment, at the controller's time", async (t) => {
  const { clock } = await startController(t);
  await put('nodes', { apiVersion: API, kind: 'Node', metadata: { name: 'e-node' } });
  await put('modules', {
    apiVersion: API,
    kind: 'Module',
    metadata: { name: 'e-mod' },
    spec: { version: '1.0.0', resources: [{ id: 'dir', kind: 'Directory', spec: { path: '/srv/e' } }] },
  });
  await put('assignments', {
    apiVersion: API,
    kind: 'Assignment',
    metadata: { name: 'e-asg' },
    spec: { module: 'e-mod', node: 'e-node' },
  });
  const decl = await writeDeclaration('e-node');
  await waitReason('e-asg', 'Pending');
  clock.advance(60_000);
  const results = decl.spec.resources.map((r) => ({ id: r.id, state: 'Applied' as const }));
  await suite.client.updateStatus('declarations', {
    ...decl,
    status: { observedGeneration: decl.metadata.generation, results },
  });
  await waitReason('e-asg', 'Applied');
  const events = await eventually(async () => {
    const fieldSelector = 'involvedObject.kind=Assignment,involvedObject.name=e-asg';
    const items = (await suite.client.list('events', { fieldSelector })).items;
    assert.equal(items.length, 2, JSON.stringify(items));
    return items.sort((a, b) => (a.lastTimestamp ?? '').localeCompare(b.lastTimestamp ?? ''));
  });
  assert.deepEqual(
    events.map((e) => [e.type, e.reason, e.message, e.lastTimestamp, e.source?.component]),
    [
      [
        'Normal',
        'Pending',
        'node "e-node" has not yet stored declaration generation 1',
        iso(T0),
        'assignment-controller',
      ],
      [
        'Normal',
        'Applied',
        'node "e-node" applied all 1 resources of version 1.0.0',
        iso(T0 + 60_000),
        'assignment-controller',
      ],
    ],
  );
  assert.equal(events[0]?.involvedObject.uid, (await getAsg('e-asg')).metadata.uid);
});

const asg = (name: string, module: string, node: string, creationTimestamp = '2026-01-01T00:00:00Z'): Assignment => ({
  apiVersion: API,
  kind: 'Assignment',
  metadata: { name, creationTimestamp },
  spec: { module, node },
});

test('a node, declaration or module maps to its assignments', () => {
  const assignments = new ObjectCache<Assignment>();
  assignments.addIndex(BY_NODE, (a) => [a.spec.node]);
  assignments.addIndex(BY_MODULE, (a) => [a.spec.module]);
  assignments.replace([asg('a', 'web', 'n1'), asg('b', 'web', 'n2'), asg('c', 'db', 'n1')]);
  assert.deepEqual(assignmentsOfNode('n1', assignments), ['a', 'c']);
  assert.deepEqual(assignmentsOfModule('web', assignments), ['a', 'b']);
  assert.deepEqual(assignmentsOfNode('none', assignments), []);
});
