/**
 * Reachability is state, not class (ADR 0036), end to end: the real `mesh-control-plane` process and a real
 * `mesh-agent` process heartbeating every 300 ms, with a 2 s grace period set on the Mesh. The node becomes
 * Reachable; killing its agent flips it to False within the grace period (plus a little) with lastSeen kept
 * and its Assignment and Declaration untouched; a change made meanwhile is pending on the node; restarting
 * the agent brings it back to True and applies what was pending. `meshctl get nodes` shows all of it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import type { Condition, KubeObject } from '../../api/meta/types.ts';
import type { Module, NodeStatus } from '../../api/v1alpha1/generated/index.ts';
import { spawnAgent, waitFor, type AgentProcess } from '../../agent/testing.ts';
import { spawnControlPlane } from '../harness.ts';
import { meshctl } from './mesh-helpers.ts';

const GRACE_MS = 2000;
const NODE = 'edge';

const api = { apiVersion: 'meshctl.dev/v1alpha1' } as const;

/** A module of a directory and a file whose content names the version. */
const module = (version: string): Module => ({
  ...api,
  kind: 'Module',
  metadata: { name: 'note' },
  spec: {
    version,
    resources: [
      { id: 'dir', kind: 'Directory', spec: { path: '/srv/note' } },
      { id: 'file', kind: 'File', dependsOn: ['dir'], spec: { path: '/srv/note/version', content: `${version}\n` } },
    ],
  },
});

/** `meshctl get nodes` as rows of cells keyed by header, cut at the headers' columns (empty cells are blank). */
async function getNodes(config: string): Promise<Array<Record<string, string>>> {
  const r = await meshctl(config, ['get', 'nodes']);
  assert.equal(r.code, 0, r.stderr);
  const [header = '', ...rows] = r.stdout.trimEnd().split('\n');
  assert.match(header, /^NAME +SITE +REACHABLE +LAST SEEN +DESIRED +APPLIED +DECLARATION +AGE$/);
  const columns = [...header.matchAll(/\S+(?: SEEN)?/g)].map((m) => ({ name: m[0].replace(' ', '_'), start: m.index }));
  return rows.map((row) =>
    Object.fromEntries(columns.map((c, i) => [c.name, row.slice(c.start, columns[i + 1]?.start).trim()])),
  );
}

const statusOf = async (
  admin: HttpClient,
  plural: string,
  name: string,
): Promise<Record<string, unknown> & NodeStatus> =>
  ((await admin.get(plural, name)) as KubeObject & { status?: Record<string, unknown> }).status ?? {};

const conditionOf = (s: NodeStatus, type: string): Condition | undefined => s.conditions?.find((c) => c.type === type);

/** Waits until the node's condition `type` is `status`; returns the node's status then. */
function waitCondition(admin: HttpClient, type: string, status: string, timeoutMs = 15_000): Promise<NodeStatus> {
  return waitFor(
    async () => {
      const s = await statusOf(admin, 'nodes', NODE);
      return conditionOf(s, type)?.status === status && s;
    },
    timeoutMs,
    `${NODE} ${type}=${status}`,
  );
}

test('a node whose agent stops becomes unreachable within the grace period, keeps its modules, and comes back', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-reach-'));
  const stateDir = join(dir, 'state');
  const root = join(dir, 'root');
  mkdirSync(root);
  const cp = await spawnControlPlane({ dataDir: join(dir, 'cp') });
  const admin = createClient(cp.config);
  const agents: AgentProcess[] = [];
  t.after(async () => {
    admin.close();
    for (const a of agents) await a.kill('SIGKILL');
    await cp.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  const startAgent = async (first: boolean): Promise<AgentProcess> => {
    const args = ['--state-dir', stateDir, '--heartbeat-interval', '300ms', '--reconcile-interval', '300ms'];
    if (first) args.push('--name', NODE, '--root', root, '--config', cp.meshconfigPath);
    const a = await spawnAgent(args);
    agents.push(a);
    return a;
  };

  // The control plane created the Mesh with the defaults when it started: set the grace period on it.
  await admin.patch('meshes', 'mesh', { spec: { reachabilityGracePeriod: `${GRACE_MS / 1000}s` } });
  await admin.create('modules', module('1.0.0'));
  await admin.create('assignments', {
    ...api,
    kind: 'Assignment',
    metadata: { name: 'note-on-edge' },
    spec: { module: 'note', node: NODE },
  });
  const agent = await startAgent(true);

  // 1. Heartbeats arrive: Reachable, and generation 1 applied.
  await waitCondition(admin, 'Reachable', 'True');
  const applied = await waitCondition(admin, 'DeclarationApplied', 'True');
  assert.equal(applied.reachable, true);
  assert.equal(applied.declaration?.desiredGeneration, applied.declaration?.appliedGeneration);
  assert.equal(readFileSync(join(root, 'srv/note/version'), 'utf8'), '1.0.0\n');
  const up = (await getNodes(cp.meshconfigPath)).find((r) => r.NAME === NODE);
  assert.equal(up?.REACHABLE, 'True');
  assert.match(up?.LAST_SEEN ?? '', /^[0-3]s$/, 'last seen is an age of a few seconds at most');
  assert.equal(up?.DECLARATION, 'Applied');
  const assignmentBefore = await admin.get('assignments', 'note-on-edge');
  const declarationBefore = await admin.get('declarations', NODE);

  // 2. The agent dies: False within the grace period plus a little, lastSeen at its last heartbeat.
  await agent.kill('SIGKILL');
  const killedAt = Date.now();
  const down = await waitCondition(admin, 'Reachable', 'False', GRACE_MS + 5000);
  const seenAt = Date.now();
  assert.ok(
    seenAt - killedAt < GRACE_MS + 1500,
    `flipped ${seenAt - killedAt} ms after the kill (grace period ${GRACE_MS} ms)`,
  );
  const lastSeen = Date.parse(down.lastSeen!);
  assert.ok(seenAt >= lastSeen + GRACE_MS, `not before the grace period after lastSeen ${down.lastSeen}`);
  const reachable = conditionOf(down, 'Reachable')!;
  assert.equal(reachable.reason, 'HeartbeatMissed');
  assert.match(reachable.message, /^no heartbeat for [23]s \(grace period 2s\)$/);
  assert.equal(down.reachable, false);
  assert.equal(down.since, reachable.lastTransitionTime);
  assert.ok(
    lastSeen <= killedAt && lastSeen > killedAt - 3000,
    `lastSeen ${down.lastSeen} is the last heartbeat before the kill at ${new Date(killedAt).toISOString()}`,
  );

  // Nothing reschedules or deletes an unreachable node's modules.
  await new Promise((r) => setTimeout(r, 1000));
  assert.deepEqual(await admin.get('assignments', 'note-on-edge'), assignmentBefore, 'the assignment is untouched');
  assert.deepEqual(await admin.get('declarations', NODE), declarationBefore, 'the declaration is untouched');
  assert.equal((await statusOf(admin, 'nodes', NODE)).lastSeen, down.lastSeen, 'lastSeen stays at the last heartbeat');

  // 3. A change while it is away is pending: desired is ahead of applied.
  await admin.patch('modules', 'note', { spec: module('2.0.0').spec });
  const pending = await waitFor(
    async () => {
      const s = await statusOf(admin, 'nodes', NODE);
      return conditionOf(s, 'DeclarationApplied')?.reason === 'Pending' && s;
    },
    10_000,
    'the new generation to be pending',
  );
  const { desiredGeneration, appliedGeneration } = pending.declaration!;
  assert.ok(desiredGeneration! > appliedGeneration!, `desired ${desiredGeneration} > applied ${appliedGeneration}`);
  assert.match(
    conditionOf(pending, 'DeclarationApplied')!.message,
    /is pending: the node last applied generation \d+; the node is unreachable/,
  );
  const away = (await getNodes(cp.meshconfigPath)).find((r) => r.NAME === NODE);
  assert.deepEqual(
    [away?.REACHABLE, away?.DESIRED, away?.APPLIED, away?.DECLARATION],
    ['False', String(desiredGeneration), String(appliedGeneration), 'Pending'],
  );

  // 4. The agent returns: True again, and what was pending is applied.
  await startAgent(false);
  const back = await waitCondition(admin, 'Reachable', 'True', 10_000);
  assert.ok(Date.parse(back.lastSeen!) > lastSeen);
  const caughtUp = await waitCondition(admin, 'DeclarationApplied', 'True');
  assert.equal(caughtUp.declaration?.appliedGeneration, desiredGeneration);
  assert.equal(readFileSync(join(root, 'srv/note/version'), 'utf8'), '2.0.0\n');
  const row = (await getNodes(cp.meshconfigPath)).find((r) => r.NAME === NODE);
  assert.deepEqual(
    [row?.REACHABLE, row?.DESIRED, row?.APPLIED, row?.DECLARATION],
    ['True', String(desiredGeneration), String(desiredGeneration), 'Applied'],
  );
});
