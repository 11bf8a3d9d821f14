// Issue 3, "Done when" 1 and 2, with the real `mesh-control-plane` (Declaration controller running) and two
// real `mesh-agent` processes, asserting on files under each node's root and on processes in /proc:
// a module assigned to one node lands there only; a new module version converges the node, removing what
// the old version owned in reverse creation order and leaving a file the agent does not own alone; a pinned
// assignment stays on its version until it is moved; assignment deletion removes what it owned.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../api/meta/types.ts';
import { serviceRecords, servicePid, waitFor, type AgentProcess } from '../../agent/testing.ts';
import {
  applyObject,
  assignmentObject,
  assignmentState,
  createMesh,
  cwdOf,
  isRunning,
  logLines,
  moduleObject,
  pidsWithTag,
  RUN_TAG,
  taggedCommand,
  waitApplied,
} from './mesh-helpers.ts';

const V1 = [
  { id: 'dir', kind: 'Directory', spec: { path: '/srv/app' } },
  { id: 'conf-v1', kind: 'File', spec: { path: '/srv/app/v1.conf', content: 'version=1\n' } },
  { id: 'data', kind: 'Directory', spec: { path: '/srv/app/data' } },
  { id: 'seed', kind: 'File', spec: { path: '/srv/app/data/seed', content: 'seed\n', mode: '0600' } },
  {
    id: 'worker-v1',
    kind: 'Service',
    spec: { driver: 'process', command: taggedCommand('v1'), workingDirectory: '/srv/app/data' },
  },
];
const V2 = [
  { id: 'dir', kind: 'Directory', spec: { path: '/srv/app' } },
  { id: 'conf-v2', kind: 'File', spec: { path: '/srv/app/v2.conf', content: 'version=2\n' } },
  {
    id: 'worker-v2',
    kind: 'Service',
    spec: { driver: 'process', command: taggedCommand('v2'), workingDirectory: '/srv/app' },
  },
];
const TAG_V1 = `${RUN_TAG}-v1 `;
const TAG_V2 = `${RUN_TAG}-v2 `;

/** The removal/apply log lines of an agent after line `from`, as "<msg> <id>". */
function engineLog(agent: AgentProcess, from: number): string[] {
  return logLines(agent)
    .slice(from)
    .filter((l) => /^(Applied|Removed|Retained) /.test(String(l.msg)) && l.id !== undefined)
    .map((l) => `${String(l.msg)} ${String(l.id)}`);
}

/** Each line's first occurrence, in order (a later reconcile may retry removing a retained directory). */
const firsts = (lines: string[]): string[] => [...new Set(lines)];

test('a module runs on its assigned node only; a new version converges it in reverse order, sparing unowned files; pins hold; deletion removes', async (t) => {
  const mesh = createMesh(t);
  const cp = await mesh.controlPlane();
  const admin = mesh.admin(cp);
  const [agentA] = await Promise.all([mesh.agent('a', cp), mesh.agent('b', cp)]);
  const a = mesh.node('a');
  const b = mesh.node('b');
  const onA = (p: string): string => join(a.root, p);
  const onB = (p: string): string => join(b.root, p);

  // 1. Module v1 + an assignment that follows the module, to node a only.
  await applyObject(admin, 'modules', moduleObject('app', '1.0.0', V1));
  await applyObject(admin, 'assignments', assignmentObject('app-on-a', 'app', 'a'));
  await waitApplied(admin, 'app-on-a', '1.0.0');
  assert.equal(readFileSync(onA('srv/app/v1.conf'), 'utf8'), 'version=1\n');
  assert.equal(readFileSync(onA('srv/app/data/seed'), 'utf8'), 'seed\n');
  const pidV1 = servicePid(a.stateDir, 'app-on-a/worker-v1')!;
  assert.ok(pidV1 && isRunning(pidV1), 'the v1 service runs on a');
  assert.equal(cwdOf(pidV1), onA('srv/app/data'), "in its declared working directory, under a's root");
  assert.deepEqual(pidsWithTag(TAG_V1), [pidV1], "exactly one v1 service process on this machine: a's");
  const declA = (await admin.get('declarations', 'a')) as KubeObject & {
    spec: { resources: Array<{ id: string; owner: string }> };
  };
  assert.deepEqual(
    declA.spec.resources.map((r) => `${r.owner}:${r.id}`),
    V1.map((r) => `app-on-a:app-on-a/${r.id}`),
  );
  type Decl = KubeObject & {
    spec: { generation: number; resources: unknown[] };
    status?: { appliedGeneration?: number };
  };
  const declB = await waitFor(
    async () => {
      const d = (await admin.get('declarations', 'b').catch(() => undefined)) as Decl | undefined;
      return d?.status?.appliedGeneration === d?.spec.generation && d;
    },
    10_000,
    'b to apply its declaration',
  );
  assert.deepEqual(declB.spec.resources, [], 'b is declared nothing, and has applied that');
  assert.deepEqual(readdirSync(b.root), [], "b's root holds none of it");
  assert.deepEqual(serviceRecords(b.stateDir), [], 'b runs no service');

  // 2. A file the agent does not own, inside a directory it owns; and b pinned to v1 while that is current.
  writeFileSync(onA('srv/app/data/notes.txt'), 'mine\n');
  await applyObject(admin, 'assignments', assignmentObject('app-on-b', 'app', 'b', '1.0.0'));
  await waitApplied(admin, 'app-on-b', '1.0.0');
  const pidB1 = servicePid(b.stateDir, 'app-on-b/worker-v1')!;
  assert.ok(pidB1 && isRunning(pidB1));
  const bGeneration = (await admin.get('declarations', 'b')).metadata.generation;

  // 3. Module v2: different file, different service, no data dir. a (following) converges; b (pinned) stays.
  const mark = logLines(agentA).length;
  await applyObject(admin, 'modules', moduleObject('app', '2.0.0', V2));
  await waitApplied(admin, 'app-on-a', '2.0.0');
  assert.equal(readFileSync(onA('srv/app/v2.conf'), 'utf8'), 'version=2\n');
  const pidV2 = servicePid(a.stateDir, 'app-on-a/worker-v2')!;
  assert.ok(pidV2 && isRunning(pidV2), 'the v2 service runs');
  assert.equal(cwdOf(pidV2), onA('srv/app'));
  assert.equal(isRunning(pidV1), false, 'the v1 service process was stopped');
  assert.equal(existsSync(onA('srv/app/v1.conf')), false, 'the v1 file was removed');
  assert.equal(existsSync(onA('srv/app/data/seed')), false, 'the owned file in the old directory was removed');
  assert.equal(readFileSync(onA('srv/app/data/notes.txt'), 'utf8'), 'mine\n', 'the unowned file is left alone');
  assert.ok(existsSync(onA('srv/app/data')), 'so the owned directory holding it is retained, not deleted');
  // Declared resources first, then removals in reverse creation order (service, file in dir, dir, file).
  await waitFor(
    () => engineLog(agentA, mark).includes('Removed File app-on-a/conf-v1'),
    5000,
    "the agent's log of the removals",
  );
  assert.deepEqual(firsts(engineLog(agentA, mark)), [
    'Applied File app-on-a/conf-v2',
    'Applied Service app-on-a/worker-v2',
    'Removed Service app-on-a/worker-v1',
    'Removed File app-on-a/seed',
    'Retained Directory app-on-a/data',
    'Removed File app-on-a/conf-v1',
  ]);
  assert.deepEqual(pidsWithTag(TAG_V1), [pidB1], "the only v1 process left is pinned b's");
  assert.deepEqual(pidsWithTag(TAG_V2), [pidV2]);
  const statusA = (await admin.get('declarations', 'a')) as KubeObject & {
    spec: { generation: number };
    status: { appliedGeneration: number; results: Array<{ id: string; state: string }> };
  };
  assert.equal(statusA.status.appliedGeneration, statusA.spec.generation);
  assert.deepEqual(
    statusA.status.results.map((r) => `${r.id} ${r.state}`),
    V2.map((r) => `app-on-a/${r.id} Applied`),
  );

  // 4. A pin to a version the module no longer has renders nothing and says why; a is untouched by it.
  await applyObject(admin, 'assignments', assignmentObject('app-old-on-a', 'app', 'a', '1.0.0'));
  const old = await waitFor(
    async () => (await assignmentState(admin, 'app-old-on-a')).applied,
    10_000,
    'app-old-on-a Applied condition',
  );
  assert.equal(old.status, 'False');
  assert.equal(old.reason, 'VersionNotAvailable');
  assert.match(old.message ?? '', /version 1\.0\.0 of module "app" is not available: the module is at version 2\.0\.0/);
  const idsA = (
    (await admin.get('declarations', 'a')) as KubeObject & { spec: { resources: Array<{ id: string }> } }
  ).spec.resources.map((r) => r.id);
  assert.deepEqual(
    idsA,
    V2.map((r) => `app-on-a/${r.id}`),
  );
  await admin.delete('assignments', 'app-old-on-a');

  // b, pinned to 1.0.0, kept its v1 resources through all this.
  const pinned = await assignmentState(admin, 'app-on-b');
  assert.deepEqual([pinned.applied?.status, pinned.version], ['True', '1.0.0']);
  assert.equal(
    (await admin.get('declarations', 'b')).metadata.generation,
    bGeneration,
    "b's declaration did not change",
  );
  assert.equal(servicePid(b.stateDir, 'app-on-b/worker-v1'), pidB1, "b's v1 service was never restarted");
  assert.equal(readFileSync(onB('srv/app/v1.conf'), 'utf8'), 'version=1\n');

  // 5. Moving b's pin to 2.0.0 rolls it. A file b's agent does not own sits where v2 declares one: a reported
  // conflict, the file untouched; once it is gone, b converges, its empty data directory removed too.
  writeFileSync(onB('srv/app/v2.conf'), 'not yours\n');
  await admin.patch('assignments', 'app-on-b', { spec: { version: '2.0.0' } });
  const conflict = await waitFor(
    async () => {
      const s = await assignmentState(admin, 'app-on-b');
      return s.applied?.reason === 'Conflict' && s.applied;
    },
    10_000,
    'app-on-b to report the conflict',
  );
  assert.equal(conflict.status, 'False');
  assert.match(
    conflict.message ?? '',
    /resource "app-on-b\/conf-v2" is Conflict on node "b": .*\/srv\/app\/v2\.conf already exists and is not owned by this agent/,
  );
  assert.equal(readFileSync(onB('srv/app/v2.conf'), 'utf8'), 'not yours\n', 'the unowned file is not overwritten');
  rmSync(onB('srv/app/v2.conf'));
  await waitApplied(admin, 'app-on-b', '2.0.0');
  assert.deepEqual(readdirSync(onB('srv/app')), ['v2.conf'], 'v1 file and data directory removed, v2 file written');
  assert.deepEqual(pidsWithTag(TAG_V1), [], 'no v1 process left anywhere');
  assert.equal(pidsWithTag(TAG_V2).length, 2);

  // 6. Deleting a's assignment removes what it owned; the directories holding the unowned file stay.
  await admin.delete('assignments', 'app-on-a');
  await waitFor(
    async () =>
      ((await admin.get('declarations', 'a')) as KubeObject & { spec: { resources: unknown[] } }).spec.resources
        .length === 0,
    10_000,
    "a's declaration to empty",
  );
  await waitFor(
    () => !existsSync(onA('srv/app/v2.conf')) && !isRunning(pidV2),
    10_000,
    "a's v2 file and service to be removed",
  );
  assert.equal(servicePid(a.stateDir, 'app-on-a/worker-v2'), undefined);
  assert.deepEqual(readdirSync(onA('srv/app')), ['data']);
  assert.deepEqual(readdirSync(onA('srv/app/data')), ['notes.txt']);
  // Once the unowned file is gone, the agent finishes removing the directories it still owns.
  rmSync(onA('srv/app/data/notes.txt'));
  await waitFor(() => !existsSync(onA('srv/app')), 10_000, 'the owned directories to be removed');
  assert.deepEqual(readdirSync(a.root), ['srv'], 'only the unowned parent of the declared paths remains');
  assert.equal(readFileSync(onB('srv/app/v2.conf'), 'utf8'), 'version=2\n', 'b is unaffected');
});
