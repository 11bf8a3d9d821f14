import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, type HttpClient } from '../api/client/http-client.ts';
import type { Client } from '../api/client/types.ts';
import type { KubeObject } from '../api/meta/types.ts';
import { kindByKind } from '../api/v1alpha1/kinds.ts';
import { startServer, type TestServer } from '../test/harness.ts';
import { LAST_APPLIED, applyObject, desiredObject, lastApplied } from './apply-object.ts';

let server: TestServer;
let client: HttpClient;
const NODE = kindByKind('Node')!;

before(async () => {
  server = await startServer();
  client = createClient(server.config);
});
after(async () => {
  client.close();
  await server.stop();
});

const manifest = (name: string, site: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name },
  spec: { site },
  ...extra,
});

test('the desired object drops status and server-set metadata; the annotation is canonical JSON of the rest', () => {
  const a = desiredObject(manifest('x', 'home', { status: { reachable: true } }));
  const b = desiredObject({
    spec: { site: 'home' },
    kind: 'Node',
    metadata: { uid: 'u', resourceVersion: '7', name: 'x' },
    apiVersion: 'meshctl.dev/v1alpha1',
  });
  assert.equal(a.status, undefined);
  assert.equal(b.metadata.uid, undefined);
  assert.equal(a.metadata.annotations?.[LAST_APPLIED], b.metadata.annotations?.[LAST_APPLIED]);
  assert.deepEqual(lastApplied(a), {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'x' },
    spec: { site: 'home' },
  });
});

test('a Conflict from a concurrent write is retried against the new live object', async () => {
  await applyObject(client, NODE, manifest('raced', 'home'));
  let interfered = false;
  let attempts = 0;
  const racing: Client = {
    ...client,
    async patch(plural, name, patch, opts) {
      attempts++;
      if (!interfered) {
        interfered = true; // another writer gets in between our GET and our PATCH
        await client.patch(plural, name, { metadata: { labels: { other: 'writer' } } });
      }
      return client.patch(plural, name, patch, opts);
    },
  };
  const result = await applyObject(racing, NODE, manifest('raced', 'lab'));
  assert.equal(attempts, 2, 'the first patch failed with Conflict and was retried');
  assert.equal(result.action, 'configured');
  const live = await client.get('nodes', 'raced');
  assert.equal((live.spec as { site: string }).site, 'lab');
  assert.deepEqual(live.metadata.labels, { other: 'writer' });
});

test('created, unchanged, configured and dry run through the real server', async () => {
  assert.equal((await applyObject(client, NODE, manifest('cycle', 'home'), { dryRun: true })).action, 'created');
  assert.equal((await applyObject(client, NODE, manifest('cycle', 'home'))).action, 'created');
  assert.equal((await applyObject(client, NODE, manifest('cycle', 'home'))).action, 'unchanged');
  const dry = await applyObject(client, NODE, manifest('cycle', 'lab'), { dryRun: true });
  assert.equal(dry.action, 'configured');
  assert.equal((dry.object.spec as { site: string }).site, 'lab');
  assert.equal(((await client.get('nodes', 'cycle')).spec as { site: string }).site, 'home');
});
