// A merge patch shares the stored object's untouched parts instead of copying it (write-handlers.ts
// mergePatched): what the handler changes in place must never reach the stored object.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpRequest } from '../../../test/harness.ts';
import type { ClientConfig } from '../../client/types.ts';
import type { KubeObject } from '../../meta/types.ts';
import { openStore } from '../../store/index.ts';
import type { Store } from '../../store/types.ts';
import { bearerAuthenticator, hashToken } from '../access/auth.ts';
import { createApp } from '../app.ts';
import { listen } from '../listen.ts';

const NODES = '/apis/meshctl.dev/v1alpha1/nodes';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const managedFields = (o: KubeObject): unknown => (o.metadata as { managedFields?: unknown }).managedFields;

async function serve(t: TestContext): Promise<{ admin: ClientConfig; store: Store }> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-merge-sharing-'));
  const store = await openStore({ dir });
  const app = createApp({ store, authenticate: bearerAuthenticator({ adminTokenSha256: hashToken('admin') }) });
  const server = await listen({ app, host: '127.0.0.1', port: 0 });
  t.after(async () => {
    app.close();
    await server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { admin: { server: server.url, token: 'admin' }, store };
}

test('a merge patch of /status leaves the stored version, managedFields and all, as it was', async (t) => {
  const { admin, store } = await serve(t);
  const applied = await httpRequest(
    admin,
    'PATCH',
    `${NODES}/a?fieldManager=tester`,
    { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'a' }, spec: { site: 'home' } },
    { 'content-type': 'application/apply-patch+yaml' },
  );
  assert.equal(applied.status, 201, applied.text);
  const before = store.get('nodes', 'a')!;
  const copy = structuredClone(before);
  assert.ok(Array.isArray(managedFields(before)) && managedFields(before), 'applied server-side: it has managedFields');

  for (const version of ['1.0', '1.1']) {
    const r = await httpRequest(admin, 'PATCH', `${NODES}/a/status`, { status: { agentVersion: version } }, MERGE);
    assert.equal(r.status, 200, r.text);
  }
  assert.deepEqual(before, copy, 'the earlier stored version is unchanged');
  const now = store.get('nodes', 'a')!;
  assert.deepEqual(managedFields(now), managedFields(copy), 'a /status write keeps managedFields');
  assert.equal((now.status as { agentVersion?: string }).agentVersion, '1.1');

  const spec = await httpRequest(admin, 'PATCH', `${NODES}/a?fieldValidation=Ignore`, { spec: { x: 1 } }, MERGE);
  assert.equal(spec.status, 200, spec.text);
  assert.deepEqual(before, copy, 'a patch dropping unknown fields changes only its own copy');
  assert.deepEqual(store.get('nodes', 'a')!.spec, { site: 'home' });
});
