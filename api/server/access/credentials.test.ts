import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../store/index.ts';
import { hashToken } from './auth.ts';
import { createNodeCredentials } from './credentials.ts';
import { writeSecret } from './secrets.ts';

/** A store in a temporary directory (removed when the test ends), and a maker of Nodes in it. */
async function setup(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-creds-'));
  const store = await openStore({ dir });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const node = (name: string) =>
    store.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name }, spec: {} });
  return { store, node };
}

test('node credentials: issued, resolved, replaced, deleted with their Node, and found when written by another path', async (t) => {
  const { store, node } = await setup(t);
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

test('a credential checked once is not trusted past a change of its Secret or of its Node', async (t) => {
  const { store, node } = await setup(t);
  const creds = createNodeCredentials({ store, rebuildIntervalMs: 0 });
  const a = await node('a');
  const token = await creds.issue(a, 'KEY-A');
  for (let i = 0; i < 3; i++) assert.deepEqual(creds.resolve(hashToken(token)), { kind: 'node', name: 'a' });
  // The Node deleted without its dependents and made again under its name: the old credential names the old uid.
  await store.delete('nodes', 'a', { propagationPolicy: 'Orphan' });
  assert.equal(creds.resolve(hashToken(token)), undefined, 'the Node is gone');
  await node('a');
  assert.equal(creds.resolve(hashToken(token)), undefined, 'another Node of the same name');

  const b = await node('b');
  const tb = await creds.issue(b, 'KEY-B');
  assert.deepEqual(creds.resolve(hashToken(tb)), { kind: 'node', name: 'b' });
  // Replaced by another path (a restore writes Secrets as they were): the index still points the old hash at b.
  await writeSecret(store, { name: 'node.b', type: 'node-credential', owner: b, data: { sha256: hashToken('other') } });
  assert.equal(creds.resolve(hashToken(tb)), undefined, 'the replaced hash no longer matches');
  assert.deepEqual(creds.resolve(hashToken('other')), { kind: 'node', name: 'b' });
});
