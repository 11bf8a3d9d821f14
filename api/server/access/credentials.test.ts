import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../store/index.ts';
import { hashToken } from './auth.ts';
import { createNodeCredentials } from './credentials.ts';
import { writeSecret } from './secrets.ts';

test('node credentials: issued, resolved, replaced, deleted with their Node, and found when written by another path', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-creds-'));
  const store = await openStore({ dir });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const node = (name: string) =>
    store.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name }, spec: {} });
  const a = await node('a');
  const creds = createNodeCredentials({ store, rebuildIntervalMs: 0 });
  const first = await creds.issue(a, 'KEY-A');
  assert.deepEqual(creds.resolve(hashToken(first)), { kind: 'node', name: 'a' });
  assert.equal(creds.nodeKey('a'), 'KEY-A');
  assert.equal(creds.resolve(hashToken('nope')), undefined);
  const second = await creds.issue(a, 'KEY-A');
  assert.equal(creds.resolve(hashToken(first)), undefined, 'a re-issued credential replaces the old one');
  assert.deepEqual(creds.resolve(hashToken(second)), { kind: 'node', name: 'a' });
  await store.delete('nodes', 'a');
  assert.equal(creds.resolve(hashToken(second)), undefined, 'the secret went with the Node');
  assert.equal(creds.nodeKey('a'), undefined);
  const b = await node('b');
  await writeSecret(store, {
    name: 'node.b',
    type: 'node-credential',
    owner: b,
    data: { sha256: hashToken('written-elsewhere') },
  });
  assert.deepEqual(
    creds.resolve(hashToken('written-elsewhere')),
    { kind: 'node', name: 'b' },
    'a miss rebuilds the index',
  );
  assert.equal(creds.nodeKey('b'), undefined, 'a credential without a key (written by meshctl init) has no key yet');
});
