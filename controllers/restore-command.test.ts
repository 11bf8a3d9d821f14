// `mesh-control-plane restore FILE`'s first half (restore-command.ts) and the start-up check it hands over to: the
// admin token of --admin-config is kept, an admin config of another mesh is refused with nothing written, and the
// restored store then re-declares the control plane for the new node (check-control-plane-node.ts, --restore).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadMeshconfig } from '../api/client/meshconfig.ts';
import { silentLogger } from '../api/meta/logger.ts';
import { ensureControlPlaneFiles, writeAdminMeshconfig } from '../api/server/pki/first-start.ts';
import { hashToken } from '../api/server/access/auth.ts';
import { openStore } from '../api/store/index.ts';
import { takeBackup } from '../api/backup/take.ts';
import { dataDirWithStore, tempDir } from '../api/backup/testdata/helpers.ts';
import { checkControlPlaneNode, declaredControlPlaneNode } from './check-control-plane-node.ts';
import { restoreCommand } from './restore-command.ts';

test('restore keeps the admin token, refuses another mesh, and the restored store names the new control-plane node', async (t) => {
  const { dataDir, store } = await dataDirWithStore(t);
  const files = await ensureControlPlaneFiles({ dataDir, listenHost: '127.0.0.1' });
  writeAdminMeshconfig(files, 'https://127.0.0.1:6443');
  const mesh = store.get('meshes', 'mesh')!;
  await store.update('meshes', { ...mesh, status: { controlPlaneNode: 'old-box' } }, { subresource: 'status' });
  const out = tempDir(t);
  const { file } = await takeBackup({ store, dataDir, name: 'b1', dir: out });

  const other = await dataDirWithStore(t);
  const otherFiles = await ensureControlPlaneFiles({ dataDir: other.dataDir, listenHost: '127.0.0.1' });
  writeAdminMeshconfig(otherFiles, 'https://127.0.0.1:6443');
  const refused = join(out, 'refused');
  await assert.rejects(
    restoreCommand({
      file,
      dataDir: refused,
      node: 'new-box',
      adminConfig: otherFiles.meshconfigPath,
      logger: silentLogger,
    }),
    /another mesh/,
  );
  assert.equal(existsSync(refused), false);

  const target = join(out, 'restored');
  await restoreCommand({
    file,
    dataDir: target,
    node: 'new-box',
    adminConfig: files.meshconfigPath,
    logger: silentLogger,
  });
  const kept = loadMeshconfig(join(target, 'admin.meshconfig'));
  assert.equal(kept.token, files.adminToken);
  assert.equal(readFileSync(join(target, 'auth/admin-token.sha256'), 'utf8').trim(), hashToken(files.adminToken));

  const restored = await openStore({ dir: join(target, 'store') });
  t.after(() => restored.close());
  assert.equal(declaredControlPlaneNode(restored)?.node, 'old-box');
  await checkControlPlaneNode({ store: restored, node: 'new-box', restore: true, logger: silentLogger });
  assert.equal(declaredControlPlaneNode(restored)?.node, 'new-box');
  assert.ok(restored.get('nodes', 'new-box'), 'a Node for the new control-plane node');
});
