import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Assignment, Declaration, ResourceResult } from '../api/v1alpha1/generated/index.ts';
import { appliedVerdict, assignmentStatus, statusDiffers } from './assignment-status.ts';
import type { OwnerOutcome } from '../api/v1alpha1/render-declaration.ts';

const assignment: Assignment = {
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Assignment',
  metadata: { name: 'web-a', generation: 3 },
  spec: { module: 'web', node: 'a' },
};
const rendered: OwnerOutcome = {
  owner: 'web-a',
  rendered: { version: '1.0.0', generation: 4, ids: ['web-a/dir', 'web-a/srv'] },
};

function decl(observedGeneration: number | undefined, results: ResourceResult[]): Declaration {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'a', generation: 5 },
    spec: { generation: 5, resources: [] },
    status: { ...(observedGeneration === undefined ? {} : { observedGeneration }), results },
  };
}

const applied = (id: string): ResourceResult => ({ id, state: 'Applied' });

test("problems before anything is applied: NodeNotFound and the renderer's reasons", () => {
  assert.deepEqual(appliedVerdict({ assignment }), {
    status: 'False',
    reason: 'NodeNotFound',
    message: 'node "a" not found',
  });
  const problem: OwnerOutcome = {
    owner: 'web-a',
    problem: { reason: 'ModuleNotFound', message: 'module "web" not found' },
  };
  assert.deepEqual(appliedVerdict({ assignment, outcome: problem }), {
    status: 'False',
    reason: 'ModuleNotFound',
    message: 'module "web" not found',
  });
});

test('Pending until the node stored the generation that holds the current resources', () => {
  const noStatus = { ...decl(undefined, []), status: undefined };
  assert.equal(appliedVerdict({ assignment, outcome: rendered, declaration: noStatus }).reason, 'Pending');
  // Results of an older generation, all Applied, do not count.
  const old = appliedVerdict({
    assignment,
    outcome: rendered,
    declaration: decl(3, [applied('web-a/dir'), applied('web-a/srv')]),
  });
  assert.deepEqual(old, {
    status: 'False',
    reason: 'Pending',
    message: 'node "a" has not yet stored declaration generation 4 (it holds generation 3)',
  });
  const partial = appliedVerdict({
    assignment,
    outcome: rendered,
    declaration: decl(4, [applied('web-a/dir'), { id: 'web-a/srv', state: 'Pending' }]),
  });
  assert.deepEqual(partial, { status: 'False', reason: 'Pending', message: 'node "a" has applied 1 of 2 resources' });
  const missing = appliedVerdict({ assignment, outcome: rendered, declaration: decl(4, [applied('web-a/dir')]) });
  assert.equal(missing.reason, 'Pending');
});

test('True when every resource of the assignment is Applied, whatever other owners report', () => {
  const d = decl(5, [applied('web-a/dir'), { id: 'db/x', state: 'Failed', message: 'not mine' }, applied('web-a/srv')]);
  assert.deepEqual(appliedVerdict({ assignment, outcome: rendered, declaration: d }), {
    status: 'True',
    reason: 'Applied',
    message: 'node "a" applied all 2 resources of version 1.0.0',
  });
  const empty: OwnerOutcome = { owner: 'web-a', rendered: { version: '1.0.0', generation: 4, ids: [] } };
  assert.equal(appliedVerdict({ assignment, outcome: empty, declaration: decl(4, []) }).status, 'True');
});

test('Waiting names the resource that waits for its certificate; a failure elsewhere in the assignment wins', () => {
  const waiting = decl(4, [
    applied('web-a/dir'),
    { id: 'web-a/srv', state: 'Waiting', message: 'File /c waits for the cert of certificate "web"' },
  ]);
  assert.deepEqual(appliedVerdict({ assignment, outcome: rendered, declaration: waiting }), {
    status: 'False',
    reason: 'Waiting',
    message: 'resource "web-a/srv" is Waiting on node "a": File /c waits for the cert of certificate "web"',
  });
  const both = decl(4, [
    { id: 'web-a/dir', state: 'Failed', message: 'boom' },
    { id: 'web-a/srv', state: 'Waiting' },
  ]);
  assert.equal(appliedVerdict({ assignment, outcome: rendered, declaration: both }).reason, 'Failed');
});

test("Failed names the resource and the agent's error; Conflict has its own reason", () => {
  const failed = decl(4, [
    applied('web-a/dir'),
    { id: 'web-a/srv', state: 'Failed', message: 'exec: "nope": not found' },
  ]);
  assert.deepEqual(appliedVerdict({ assignment, outcome: rendered, declaration: failed }), {
    status: 'False',
    reason: 'Failed',
    message: 'resource "web-a/srv" is Failed on node "a": exec: "nope": not found',
  });
  const conflict = decl(4, [
    { id: 'web-a/dir', state: 'Conflict', message: '/srv/web exists and is not owned' },
    { id: 'web-a/srv', state: 'DependencyFailed' },
  ]);
  const v = appliedVerdict({ assignment, outcome: rendered, declaration: conflict });
  assert.equal(v.reason, 'Conflict');
  assert.match(v.message, /web-a\/dir.*not owned/);
  const dep = decl(4, [applied('web-a/dir'), { id: 'web-a/srv', state: 'DependencyFailed' }]);
  assert.equal(appliedVerdict({ assignment, outcome: rendered, declaration: dep }).reason, 'Failed');
});

test('the status carries observedGeneration, the rendered version and Applied; rewriting it is a no-op', () => {
  const d = decl(4, [applied('web-a/dir'), applied('web-a/srv')]);
  const status = assignmentStatus({ assignment, outcome: rendered, declaration: d, now: '2026-01-05T00:00:00Z' });
  assert.deepEqual(status, {
    observedGeneration: 3,
    version: '1.0.0',
    conditions: [
      {
        type: 'Applied',
        status: 'True',
        reason: 'Applied',
        message: 'node "a" applied all 2 resources of version 1.0.0',
        observedGeneration: 3,
        lastTransitionTime: '2026-01-05T00:00:00Z',
      },
    ],
  });
  assert.equal(statusDiffers(assignment, status), true);
  const written = { ...assignment, status: JSON.parse(JSON.stringify(status)) as typeof status };
  const again = assignmentStatus({
    assignment: written,
    outcome: rendered,
    declaration: d,
    now: '2026-01-06T00:00:00Z',
  });
  assert.equal(statusDiffers(written, again), false, 'same verdict later: nothing to write');
  const problem = assignmentStatus({
    assignment: written,
    outcome: { owner: 'web-a', problem: { reason: 'ModuleNotFound', message: 'm' } },
    now: '2026-01-07T00:00:00Z',
  });
  assert.equal(problem.version, undefined);
  assert.equal(problem.conditions?.[0]?.lastTransitionTime, '2026-01-07T00:00:00Z');
});
