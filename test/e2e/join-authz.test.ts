// What a node credential may do (the Node authorizer and NodeRestriction) against the real server over
// HTTPS, and that no API response — list, get, watch of every kind, as admin or as a node — ever carries a
// secret: join tokens, their hashes, node credentials, their hashes, node keys, private keys.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientConfig } from '../../api/client/types.ts';
import { hashToken } from '../../api/server/access/auth.ts';
import { KINDS } from '../../api/v1alpha1/kinds.ts';
import { httpRequest, openStream, startServer, type TestServer } from '../harness.ts';
import { API, asNode, createToken, newNodeKey, postJoin } from './join-helpers.ts';

let srv: TestServer;
let a: ClientConfig;
/** Every secret value this test made or the server holds, which no response may contain. */
const secrets: string[] = [];

const MERGE = { 'content-type': 'application/merge-patch+json' };
const decl = (node: string) => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Declaration',
  metadata: { name: node },
  spec: { generation: 1, resources: [] },
});
const event = (kind: string, name: string) => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Event',
  metadata: { generateName: 'a-' },
  involvedObject: { apiVersion: 'meshctl.dev/v1alpha1', kind, name },
  type: 'Normal',
  reason: 'Tested',
  message: 'x',
  count: 1,
});

async function joinNode(name: string): Promise<string> {
  const { token } = await createToken(srv.config, { description: `for ${name}` });
  const nodeKey = newNodeKey();
  const r = await postJoin(srv.config, { token, nodeName: name, nodeKey });
  assert.equal(r.status, 200, r.text);
  secrets.push(token, token.slice(7), hashToken(token), r.json.credential, hashToken(r.json.credential), nodeKey);
  return r.json.credential;
}

before(async () => {
  srv = await startServer({ meshAccess: true });
  a = asNode(srv.config, await joinNode('a'));
  await joinNode('b');
  const unused = await createToken(srv.config, { ttl: '1h' });
  secrets.push(unused.token, unused.token.slice(7), hashToken(unused.token));
  for (const f of ['ca.key', 'server.key'])
    secrets.push(
      ...readFileSync(join(srv.dataDir, 'pki', f), 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith('-----')),
    );
  for (const n of ['a', 'b']) assert.equal((await srv.request('POST', `${API}/declarations`, decl(n))).status, 201);
  const asg = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Assignment',
    metadata: { name: 'm-on-a' },
    spec: { module: 'm', node: 'a' },
  };
  assert.equal((await srv.request('POST', `${API}/assignments`, asg)).status, 201);
});
after(async () => {
  await srv?.stop();
});

function forbidden(r: { status: number; json: any }, message: RegExp): void {
  assert.equal(r.status, 403, JSON.stringify(r.json));
  assert.equal(r.json.reason, 'Forbidden');
  assert.match(r.json.message, message);
}

test("a node credential is refused (403) on another node's declaration, on any spec, on listing nodes", async () => {
  forbidden(
    await httpRequest(a, 'GET', `${API}/declarations/b`),
    /declarations.meshctl.dev "b" is forbidden: User "system:node:a" cannot get/,
  );
  forbidden(
    await httpRequest(a, 'GET', `${API}/declarations?watch=1&fieldSelector=metadata.name%3Db`),
    /cannot watch resource "declarations"/,
  );
  forbidden(
    await httpRequest(a, 'PATCH', `${API}/declarations/b/status`, { status: {} }, MERGE),
    /cannot patch resource "declarations\/status"/,
  );
  const own = (await httpRequest(a, 'GET', `${API}/nodes/a`)).json;
  forbidden(
    await httpRequest(a, 'PUT', `${API}/nodes/a`, { ...own, spec: { site: 'elsewhere' } }),
    /nodes.meshctl.dev "a" is forbidden: .*cannot update resource "nodes"/,
  );
  forbidden(
    await httpRequest(a, 'PATCH', `${API}/nodes/a`, { spec: { site: 'elsewhere' } }, MERGE),
    /cannot patch resource "nodes"/,
  );
  forbidden(
    await httpRequest(a, 'PATCH', `${API}/declarations/a`, { spec: { generation: 2 } }, MERGE),
    /cannot patch resource "declarations"/,
  );
  const mod = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Module',
    metadata: { name: 'evil' },
    spec: { version: '1', resources: [] },
  };
  forbidden(await httpRequest(a, 'POST', `${API}/modules`, mod), /cannot create resource "modules"/);
  forbidden(
    await httpRequest(a, 'GET', `${API}/nodes`),
    /cannot list resource "nodes".*only with fieldSelector=metadata.name=a/,
  );
  forbidden(await httpRequest(a, 'GET', `${API}/nodes?watch=1`), /cannot watch resource "nodes"/);
  forbidden(await httpRequest(a, 'GET', `${API}/jointokens`), /cannot list resource "jointokens"/);
  forbidden(
    await httpRequest(a, 'POST', `${API}/jointokens`, {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'JoinToken',
      metadata: {},
    }),
    /cannot create resource "jointokens"/,
  );
  forbidden(await httpRequest(a, 'DELETE', `${API}/nodes/a`), /cannot delete resource "nodes"/);
  forbidden(
    await httpRequest(a, 'POST', `${API}/events`, event('Node', 'b')),
    /an Event from a node must be about its own .* not about Node "b"/,
  );
  forbidden(await httpRequest(a, 'POST', `${API}/events`, event('Module', 'm')), /not about Module "m"/);
  assert.equal((await srv.request('GET', `${API}/nodes/a`)).json.spec.site, undefined, 'nothing changed');
  assert.equal((await srv.request('GET', `${API}/modules/evil`)).status, 404);
});

test('a node credential reads its own Node and Declaration and the Mesh, and writes their status and its events', async () => {
  assert.equal((await httpRequest(a, 'GET', `${API}/nodes/a`)).status, 200);
  const list = await httpRequest(a, 'GET', `${API}/declarations?fieldSelector=metadata.name%3Da`);
  assert.deepEqual(
    list.json.items.map((o: any) => o.metadata.name),
    ['a'],
  );
  const watch = await openStream(a, `${API}/declarations?watch=1&fieldSelector=metadata.name%3Da&resourceVersion=0`);
  try {
    assert.equal(watch.status, 200);
    assert.equal((await watch.next()).object.metadata.name, 'a');
  } finally {
    watch.close();
  }
  const st = await httpRequest(a, 'PATCH', `${API}/nodes/a/status`, { status: { agentVersion: '9.9.9' } }, MERGE);
  assert.equal(st.status, 200, st.text);
  const ds = await httpRequest(
    a,
    'PATCH',
    `${API}/declarations/a/status`,
    { status: { observedGeneration: 1 } },
    MERGE,
  );
  assert.equal(ds.status, 200, ds.text);
  for (const [kind, name] of [
    ['Node', 'a'],
    ['Declaration', 'a'],
    ['Assignment', 'm-on-a'],
  ]) {
    assert.equal((await httpRequest(a, 'POST', `${API}/events`, event(kind, name))).status, 201, `${kind} ${name}`);
  }
  const mesh = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Mesh', metadata: { name: 'mesh' }, spec: {} };
  assert.equal((await srv.request('POST', `${API}/meshes`, mesh)).status, 201);
  assert.equal((await httpRequest(a, 'GET', `${API}/meshes/mesh`)).status, 200);
  assert.equal((await httpRequest(a, 'GET', '/apis')).status, 200);
});

/** Every response body of list, get (JSON and Table) and watch of every kind, for one caller. */
async function everyResponse(cfg: ClientConfig): Promise<string[]> {
  const bodies: string[] = [];
  await Promise.all(
    KINDS.map(async (k) => {
      const list = await httpRequest(cfg, 'GET', `${API}/${k.plural}`);
      const table = await httpRequest(cfg, 'GET', `${API}/${k.plural}`, undefined, {
        accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
      });
      bodies.push(list.text, table.text);
      for (const o of list.json?.items ?? [])
        bodies.push((await httpRequest(cfg, 'GET', `${API}/${k.plural}/${o.metadata.name}`)).text);
      const w = await openStream(cfg, `${API}/${k.plural}?watch=1&resourceVersion=0&timeoutSeconds=1`);
      await w.ended;
      bodies.push(w.raw());
    }),
  );
  for (const path of ['/cluster-info', '/apis', `${API}`, '/version'])
    bodies.push((await httpRequest(cfg, 'GET', path)).text);
  return bodies;
}

test('no API response carries a secret: tokens, hashes, credentials, node keys, private keys', async () => {
  assert.ok(secrets.length >= 20);
  const bodies = [...(await everyResponse(srv.config)), ...(await everyResponse(a))];
  assert.ok(
    bodies.some((b) => b.includes('"JoinToken"')),
    'the tokens were listed',
  );
  assert.ok(
    bodies.some((b) => b.includes('"usedBy":"a"')),
    'a used token was listed',
  );
  for (const body of bodies)
    for (const s of secrets)
      assert.ok(!body.includes(s), `a response contains a secret (${s.slice(0, 6)}…): ${body.slice(0, 300)}`);
  assert.ok(
    srv.store.list('secrets').items.length >= 5,
    'the secrets are in the store, where the API cannot reach them',
  );
  for (const path of [`${API}/secrets`, `${API}/secrets/node.a`, `${API}/watch/secrets`])
    assert.equal((await srv.request('GET', path)).status, 404);
});
