// Which node may serve a store (ADR 0053: declared, never elected), over a real store in a temp dir. The
// real process is tested in test/e2e/init-cli.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type FileStore } from '../api/store/index.ts';
import { controlPlaneModule, roleAssignment } from '../api/v1alpha1/builtin-modules.ts';
import { WrongNodeError, checkControlPlaneNode, declaredControlPlaneNode } from './check-control-plane-node.ts';

async function tempStore(t: { after(fn: () => Promise<void>): void }): Promise<FileStore> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-cp-node-'));
  const store = await openStore({ dir });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

const logger = { info: () => {}, error: () => {} };

test('a store that declares nothing is served by any node', async (t) => {
  const store = await tempStore(t);
  assert.equal(declaredControlPlaneNode(store), undefined);
  await checkControlPlaneNode({ store, node: 'anything', restore: false, logger });
});

test('without a Mesh status, the control-plane Assignment declares the node', async (t) => {
  const store = await tempStore(t);
  await store.create('assignments', roleAssignment('control-plane', 'a'));
  assert.deepEqual(declaredControlPlaneNode(store), { node: 'a', source: 'Assignment "control-plane"' });
  await checkControlPlaneNode({ store, node: 'a', restore: false, logger });
  await assert.rejects(
    checkControlPlaneNode({ store, node: 'b', restore: false, logger }),
    (e: unknown) =>
      e instanceof WrongNodeError &&
      /declares node "a" as the control-plane node \(Assignment "control-plane"\), but this process runs on node "b"/.test(
        e.message,
      ),
  );
});

test('--restore makes the store name this node: Mesh status, Assignment, module --node, Node', async (t) => {
  const store = await tempStore(t);
  await store.create('meshes', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Mesh',
    metadata: { name: 'mesh' },
    spec: {},
    status: { controlPlaneNode: 'a', hubNode: 'a' },
  });
  await store.create('assignments', roleAssignment('control-plane', 'a'));
  await store.create(
    'modules',
    controlPlaneModule({ version: '1', command: ['cp'], dataDir: '/d', listen: '0.0.0.0:6443', node: 'a' }),
  );
  const lines: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
  const log = {
    info: (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, fields }),
    error: () => {},
  };
  await checkControlPlaneNode({ store, node: 'b', restore: true, logger: log });
  assert.deepEqual(store.get('meshes', 'mesh')?.status, { controlPlaneNode: 'b', hubNode: 'a' });
  assert.equal((store.get('assignments', 'control-plane')?.spec as { node: string }).node, 'b');
  const mod = store.get('modules', 'control-plane')?.spec as { resources: Array<{ spec: { command: string[] } }> };
  assert.deepEqual(mod.resources[0].spec.command, [
    'cp',
    '--data-dir',
    '/d',
    '--listen',
    '0.0.0.0:6443',
    '--node',
    'b',
  ]);
  assert.ok(store.get('nodes', 'b'));
  assert.ok(lines.some((l) => l.msg === 'Restored the control plane onto this node' && l.fields?.previous === 'a'));
  await checkControlPlaneNode({ store, node: 'b', restore: false, logger });
  await assert.rejects(checkControlPlaneNode({ store, node: 'a', restore: false, logger }), WrongNodeError);
});
