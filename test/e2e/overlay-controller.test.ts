/**
 * The overlay controller against the real API server and store (in-process, port 0), through the real HTTP
 * client: every Node gets an overlay address from the Mesh's CIDR, kept in the store (a restarted control
 * plane keeps every address) and never given to a second node while the first exists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import { silentLogger } from '../../api/meta/logger.ts';
import { createOverlayController } from '../../controllers/overlay-controller.ts';
import { createManager, type Manager } from '../../controllers/runtime/manager.ts';
import { startServer, type TestServer } from '../harness.ts';
import { eventually } from '../eventually.ts';

const API = 'meshctl.dev/v1alpha1';

async function start(dataDir: string): Promise<{ server: TestServer; client: HttpClient; manager: Manager }> {
  const server = await startServer({ insecure: true, dataDir });
  const client = createClient(server.config);
  const manager = createManager({ client, logger: silentLogger, backoff: { baseMs: 20, maxMs: 200 } });
  manager.add(createOverlayController({ manager }));
  assert.equal(await manager.start(), true);
  return { server, client, manager };
}

async function stop(s: { server: TestServer; client: HttpClient; manager: Manager }): Promise<void> {
  await s.manager.stop();
  s.client.close();
  await s.server.stop();
}

/** Every node's address once all `names` have one. */
async function addresses(client: HttpClient, names: string[]): Promise<Record<string, string>> {
  return eventually(
    async () => {
      const out: Record<string, string> = {};
      for (const n of (await client.list('nodes')).items) {
        const a = n.status?.overlay?.address;
        if (a) out[n.metadata.name!] = a;
      }
      assert.ok(
        names.every((n) => out[n]),
        `addresses for ${names.join(', ')}: ${JSON.stringify(out)}`,
      );
      return out;
    },
    { timeoutMs: 15_000 },
  );
}

const createNode = (c: HttpClient, name: string) =>
  c.create('nodes', { apiVersion: API, kind: 'Node', metadata: { name } });

test('overlay addresses: distinct, from the Mesh CIDR, kept across a control-plane restart, never reused while their node exists', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-overlay-ctl-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  let s = await start(dataDir);
  t.after(() => stop(s));
  await Promise.all(['n1', 'n2', 'n3', 'n4'].map((n) => createNode(s.client, n)));
  const first = await addresses(s.client, ['n1', 'n2', 'n3', 'n4']);
  assert.equal(new Set(Object.values(first)).size, 4, `distinct: ${JSON.stringify(first)}`);
  for (const a of Object.values(first)) assert.match(a, /^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.\d+\.\d+$/);

  await stop(s);
  s = await start(dataDir);
  await createNode(s.client, 'n5');
  const after = await addresses(s.client, ['n1', 'n2', 'n3', 'n4', 'n5']);
  for (const n of ['n1', 'n2', 'n3', 'n4'])
    assert.equal(after[n], first[n], `${n} keeps its address across the restart`);
  assert.ok(!Object.values(first).includes(after.n5), `n5 got ${after.n5}, an address a living node holds`);

  // An agent's heartbeat (a merge patch of other overlay fields) leaves the address alone.
  await s.client.patch('nodes', 'n1', { status: { overlay: { message: 'x' } } }, { subresource: 'status' });
  assert.equal((await s.client.get('nodes', 'n1')).status?.overlay?.address, first.n1);
});

test('a node writes its overlay key and peers but cannot set or change its overlay address', async (t) => {
  const server = await startServer({
    insecure: true,
    meshAccess: true,
    tokens: { 'tok-a': { kind: 'node', name: 'a' } },
  });
  const admin = createClient(server.config);
  const nodeA = createClient({ ...server.config, token: 'tok-a' });
  t.after(async () => {
    admin.close();
    nodeA.close();
    await server.stop();
  });
  await createNode(admin, 'a');
  const key = 'A'.repeat(43) + '=';
  const write = (address: string): Promise<unknown> =>
    nodeA.patch('nodes', 'a', { status: { overlay: { address, publicKey: key } } }, { subresource: 'status' });
  await write('100.64.0.99');
  let overlay = (await admin.get('nodes', 'a')).status?.overlay;
  assert.deepEqual(overlay, { publicKey: key }, 'no address before the control plane allocates one');
  await admin.patch('nodes', 'a', { status: { overlay: { address: '100.64.0.1' } } }, { subresource: 'status' });
  await write('100.64.0.2');
  overlay = (await admin.get('nodes', 'a')).status?.overlay;
  assert.deepEqual(overlay, { address: '100.64.0.1', publicKey: key }, "the node's write kept the allocated address");
});
