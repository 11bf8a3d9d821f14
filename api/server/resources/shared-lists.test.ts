import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import type { Node } from '../../v1alpha1/generated/node.ts';
import { serverSuite } from '../../../test/server-suite.ts';
import { eventually } from '../../../test/eventually.ts';

const s = serverSuite({ insecure: true, maxListBytes: 4 * 1024 * 1024 }); // less than one 8 MB list
const NODES = '/apis/meshctl.dev/v1alpha1/nodes';

function node(name: string, note: string): Node {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name, annotations: { note } },
    spec: { site: 'home' },
  };
}

/** A list GET whose answer is not read yet: its response stays on the wire (8 MB is more than socket buffers). */
function unreadList(): Promise<IncomingMessage> {
  const u = new URL(NODES, s.server.url);
  const headers = { authorization: `Bearer ${s.server.adminToken}` };
  return new Promise((resolve, reject) => {
    const r = request({ hostname: u.hostname, port: u.port, path: u.pathname, headers }, (res) => {
      res.pause();
      resolve(res);
    });
    r.on('error', reject);
    r.end();
  });
}

async function readAll(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

test('concurrent lists of the same list share one serialization and get identical answers', async () => {
  const note = 'x'.repeat(200_000);
  for (let i = 0; i < 40; i++) await s.server.store.create('nodes', node(`big-${i}`, note));
  const before = s.server.app.stats();
  const held = await unreadList();
  const answers = await Promise.all(Array.from({ length: 5 }, () => s.server.request('GET', NODES)));
  const after = s.server.app.stats();
  assert.equal(after.listSerializations - before.listSerializations, 1, 'serialized once');
  assert.equal(after.listsShared - before.listsShared, 5, 'shared by the other five');
  const first = await readAll(held.resume());
  assert.equal(JSON.parse(first).items.length, 40);
  for (const a of answers) {
    assert.equal(a.status, 200);
    assert.ok(a.text === first, 'the same bytes');
  }

  await s.server.store.create('nodes', node('after', 'y'));
  const fresh = await s.server.request('GET', NODES);
  assert.equal(fresh.json.items.length, 41, 'a write makes a new list');
  assert.equal(s.server.app.stats().listSerializations - after.listSerializations, 1);
});

test('while the lists being sent are over the byte budget, a list needing a new serialization is 429', async () => {
  const held = await unreadList(); // 8 MB on the wire: over the 4 MiB budget
  assert.equal((await s.server.request('GET', NODES)).status, 200, 'the same list is shared: no new bytes');
  await s.server.store.create('nodes', node('budget', 'z'));
  const refused = await s.server.request('GET', NODES);
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.json.reason, 'TooManyRequests');
  assert.equal(refused.headers['retry-after'], '1');
  assert.ok(s.server.app.stats().listBytes > 4 * 1024 * 1024, 'the held list is counted');
  await readAll(held.resume());
  await eventually(async () => assert.equal((await s.server.request('GET', NODES)).status, 200, 'sent again'));
  await eventually(async () => assert.equal(s.server.app.stats().listBytes, 0, 'nothing held once sent'));
});
