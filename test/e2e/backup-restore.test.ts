// Issue 11, "Done when" 1: the restore drill (restore-drill.ts) with the real control plane, three real agents
// and the real CLIs — a backup pulled off the node, more changes, the control plane SIGKILLed and its data dir
// deleted, a restore onto a new data dir and port, `mesh-agent set-server` on each node; the agents reconnect
// without re-joining, the backup's state is served (node-a goes back to it, deliberately and reported), new
// changes flow, and every service kept its pid throughout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../../api/meta/api-error.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import { waitFor } from '../../agent/testing.ts';
import { applyObject, assignmentObject, createMesh, isRunning, meshctl, waitApplied } from './mesh-helpers.ts';
import { DRILL_NODES, fileModule, fileUnder, runRestoreDrill } from './restore-drill.ts';

test('restore drill: back up off the node, lose the control plane, restore elsewhere, agents reconnect, services untouched', async (t) => {
  const mesh = createMesh(t);
  const d = await runRestoreDrill(mesh);
  t.diagnostic(
    `restore command → serving ${Math.round(d.servingMs)} ms, → every agent reporting ${Math.round(d.reportingMs)} ms`,
  );

  assert.match(d.create.stdout, /saved and verified on the control-plane node/);
  assert.match(d.create.stdout, /saved off the node: .*mesh\.meshbackup/);
  assert.equal(statSync(d.archive).mode & 0o777, 0o600);
  for (const r of d.setServer) assert.equal(r.code, 0, r.stderr);
  const restoreLine = d.cp
    .output()
    .split('\n')
    .find((l) => l.includes('"Restored backup"'));
  assert.match(restoreLine ?? '', /every change made after it is lost/, 'restore says what it loses');
  assert.match(restoreLine ?? '', /"resourceVersion":"\d+"/);
  assert.match(restoreLine ?? '', /"adminToken":"kept"/);

  // Every node kept running: the same service pids, alive.
  for (const n of DRILL_NODES) {
    assert.equal(d.pids.after[n], d.pids.before[n], `${n}: service pid unchanged`);
    assert.ok(isRunning(d.pids.before[n]), `${n}: service running`);
  }
  // The backup's state is served: the module made after it is gone, and node-a went back to the restored declaration.
  await assert.rejects(d.admin.get('assignments', 'late-on-node-a'), (e) => e instanceof ApiError && e.code === 404);
  const root = (n: string): string => mesh.node(n).root;
  await waitFor(
    () => !fileUnder(root('node-a'), 'srv/late.txt'),
    30_000,
    'node-a to remove what came after the backup',
  );
  assert.equal(readFileSync(join(root('node-a'), 'srv/app/conf'), 'utf8'), 'before the backup\n');
  await waitFor(
    async () => (await d.admin.list('events')).items.some((e) => isReplaced(e, 'node-a')),
    30_000,
    "node-a's DeclarationReplaced event",
  );
  const mesh1 = await d.admin.get('meshes', 'mesh');
  const restored = (mesh1.status as { conditions?: Array<{ type: string; message: string }> }).conditions?.find(
    (c) => c.type === 'Restored',
  );
  assert.match(restored?.message ?? '', /every change made after it is lost/);

  // The agents did not re-join: the same Node objects (uids from before the backup), same credential.
  const nodes = await d.admin.list('nodes');
  for (const n of DRILL_NODES) assert.ok(nodes.items.some((x) => x.metadata.name === n));

  // New changes flow to the nodes.
  await applyObject(d.admin, 'modules', fileModule('after', '/srv/after.txt', 'after the restore\n'));
  await applyObject(d.admin, 'assignments', assignmentObject('after-on-node-b', 'after', 'node-b'));
  await waitApplied(d.admin, 'after-on-node-b', '1.0.0', 30_000);
  assert.equal(readFileSync(join(root('node-b'), 'srv/after.txt'), 'utf8'), 'after the restore\n');

  // The admin's kept meshconfig works against the new address, and the pulled archive verifies offline.
  const verify = await meshctl(d.adminConfig, ['backup', 'verify', d.archive]);
  assert.equal(verify.code, 0, verify.stderr);
  assert.match(verify.stdout, /verified backup .* of mesh sha256:/);
  for (const n of DRILL_NODES) assert.equal(d.pids.before[n], d.pids.after[n]);
});

function isReplaced(e: KubeObject, node: string): boolean {
  const ev = e as KubeObject & { reason?: string; involvedObject?: { name?: string } };
  return ev.reason === 'DeclarationReplaced' && ev.involvedObject?.name === node;
}
