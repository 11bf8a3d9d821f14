// The Mesh singleton a control plane makes sure of when it starts, over a real store in a temp dir. The real
// process serving it is tested in test/e2e/server-process.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type FileStore } from '../api/store/index.ts';
import { ensureMesh } from './ensure-mesh.ts';

async function tempStore(t: { after(fn: () => Promise<void>): void }): Promise<FileStore> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-ensure-mesh-'));
  const store = await openStore({ dir });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

test('a store without a Mesh gets one with the defaults (an empty spec), and says so', async (t) => {
  const store = await tempStore(t);
  const logged: string[] = [];
  await ensureMesh(store, { info: (msg) => logged.push(msg), error: () => {} });
  const mesh = store.get('meshes', 'mesh');
  assert.ok(mesh, 'the Mesh exists');
  assert.deepEqual(mesh.spec, {});
  assert.equal(mesh.status, undefined);
  assert.deepEqual(logged, ['Created Mesh']);
});

test('an existing Mesh is left alone: same uid and resourceVersion, its settings and status kept', async (t) => {
  const store = await tempStore(t);
  const created = await store.create('meshes', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Mesh',
    metadata: { name: 'mesh' },
    spec: { heartbeatInterval: '3s' },
  });
  const withStatus = await store.update(
    'meshes',
    { ...created, status: { controlPlaneNode: 'cp-1' } },
    { subresource: 'status' },
  );
  const logged: string[] = [];
  await ensureMesh(store, { info: (msg) => logged.push(msg), error: () => {} });
  const mesh = store.get('meshes', 'mesh')!;
  assert.equal(mesh.metadata.uid, created.metadata.uid);
  assert.equal(mesh.metadata.resourceVersion, withStatus.metadata.resourceVersion);
  assert.deepEqual(mesh.spec, { heartbeatInterval: '3s' });
  assert.deepEqual(mesh.status, { controlPlaneNode: 'cp-1' });
  assert.deepEqual(logged, []);
});
