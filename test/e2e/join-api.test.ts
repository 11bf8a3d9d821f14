// The join API against the real server (HTTPS, real store): JoinToken creation returns the token once and
// stores only its hash; /cluster-info; POST /join creates the Node and a credential; used, expired, deleted,
// wrong and malformed tokens are refused with messages that say why; 409 for another key, 422 for a bad
// name or key; re-join with the same key is idempotent; deleting a token or a Node deletes its secret.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hashToken } from '../../api/server/access/auth.ts';
import { caPin } from '../../api/meta/ca-pin.ts';
import { httpRequest, startServer, type TestServer } from '../harness.ts';
import { API, asNode, createToken, newNodeKey, postJoin } from './join-helpers.ts';

let srv: TestServer;
before(async () => {
  // More joins from one address than the control plane allows a minute: join-rate.test.ts tests the limit.
  const many = { perMinute: 1000, burst: 1000 };
  srv = await startServer({ meshAccess: true, joinRate: { perAddress: many, overall: many } });
});
after(async () => {
  await srv?.stop();
});

const secret = (name: string) => srv.store.get('secrets', name) as { data: Record<string, string> } | undefined;

function refused(r: { status: number; json: any }, code: number, message: RegExp): void {
  assert.equal(r.status, code, JSON.stringify(r.json));
  assert.equal(r.json.kind, 'Status');
  assert.match(r.json.message, message);
}

test('creating a JoinToken returns the token once, in a header; the object and the store keep only a hash', async () => {
  const before = Date.now();
  const { token, res } = await createToken(srv.config, { ttl: '2h', description: 'the office box' });
  assert.match(token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
  const id = token.slice(0, 6);
  assert.equal(res.json.metadata.name, id);
  assert.deepEqual(res.json.spec, { ttl: '2h', description: 'the office box' });
  assert.equal(res.json.status.used, false);
  const expires = Date.parse(res.json.status.expiresAt);
  assert.ok(
    expires >= before + 2 * 3600_000 - 1000 && expires <= Date.now() + 2 * 3600_000 + 1000,
    res.json.status.expiresAt,
  );
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.ok(!res.text.includes(token.slice(7)), 'the body does not carry the secret');
  assert.equal(secret(`jointoken.${id}`)?.data.sha256, hashToken(token));
  const got = await srv.request('GET', `${API}/jointokens/${id}`);
  assert.equal(got.headers['x-meshctl-join-token'], undefined);
  assert.ok(!got.text.includes(token.slice(7)) && !got.text.includes(hashToken(token)));
  const dflt = await createToken(srv.config);
  assert.equal(dflt.res.json.spec.ttl, '24h');
});

test('a dry run creates nothing and returns no token; a name that is not a token id gets no secret', async () => {
  const dry = await srv.request('POST', `${API}/jointokens?dryRun=All`, {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'JoinToken',
    metadata: {},
    spec: {},
  });
  assert.equal(dry.status, 201);
  assert.equal(dry.headers['x-meshctl-join-token'], undefined);
  assert.equal((await srv.request('GET', `${API}/jointokens/${dry.json.metadata.name}`)).status, 404);
  const { token, res } = await createToken(srv.config, {}, 'join-node-b');
  assert.equal(token, '');
  assert.equal(res.json.metadata.name, 'join-node-b');
  assert.equal(secret('jointoken.join-node-b'), undefined);
  const named = await createToken(srv.config, {}, 'abc123');
  assert.match(named.token, /^abc123\./);
});

test('/cluster-info is anonymous and serves the CA whose pin meshctl prints', async () => {
  const r = await httpRequest({ ...srv.config, token: undefined }, 'GET', '/cluster-info');
  assert.equal(r.status, 200);
  assert.equal(r.json.ca, srv.config.caData);
  assert.equal(caPin(r.json.ca), caPin(srv.config.caData!));
  assert.match(r.json.server, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.equal((await httpRequest(srv.config, 'POST', '/cluster-info', {})).status, 405);
});

test('a join creates the Node, marks the token used and issues a credential for that node alone', async () => {
  const { token } = await createToken(srv.config);
  const r = await postJoin(srv.config, { token, nodeName: 'j1', site: 'home', nodeKey: newNodeKey() });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.nodeName, 'j1');
  assert.equal(r.headers['cache-control'], 'no-store');
  const node = await srv.request('GET', `${API}/nodes/j1`);
  assert.deepEqual(node.json.spec, { site: 'home' });
  const t = (await srv.request('GET', `${API}/jointokens/${token.slice(0, 6)}`)).json;
  assert.equal(t.status.used, true);
  assert.equal(t.status.usedBy, 'j1');
  assert.ok(Date.parse(t.status.usedAt) <= Date.now());
  assert.equal(secret('node.j1')?.data.sha256, hashToken(r.json.credential));
  const own = await httpRequest(asNode(srv.config, r.json.credential), 'GET', `${API}/nodes/j1`);
  assert.equal(own.status, 200);
  assert.equal((await httpRequest(asNode(srv.config, 'x' + r.json.credential), 'GET', `${API}/nodes/j1`)).status, 401);
  const p256 = await postJoin(srv.config, {
    token: (await createToken(srv.config)).token,
    nodeName: 'j1-p256',
    nodeKey: newNodeKey('p256'),
  });
  assert.equal(p256.status, 200, p256.text);
});

test('used, expired, deleted, wrong and malformed tokens are refused with 401 saying why', async () => {
  const key = newNodeKey();
  const used = (await createToken(srv.config)).token;
  assert.equal((await postJoin(srv.config, { token: used, nodeName: 'j2', nodeKey: key })).status, 200);
  refused(
    await postJoin(srv.config, { token: used, nodeName: 'j2', nodeKey: key }),
    401,
    /join token [a-z0-9]{6} was already used by node j2 at .*single-use/,
  );
  const short = (await createToken(srv.config, { ttl: '1s' })).token;
  await new Promise((r) => setTimeout(r, 1100));
  refused(
    await postJoin(srv.config, { token: short, nodeName: 'j3', nodeKey: key }),
    401,
    /join token [a-z0-9]{6} has expired \(at .*\); create a new one with `meshctl token create`/,
  );
  const deleted = (await createToken(srv.config)).token;
  assert.equal((await srv.request('DELETE', `${API}/jointokens/${deleted.slice(0, 6)}`)).status, 200);
  assert.equal(secret(`jointoken.${deleted.slice(0, 6)}`), undefined, 'the secret went with the token (cascade)');
  refused(
    await postJoin(srv.config, { token: deleted, nodeName: 'j3', nodeKey: key }),
    401,
    /join token [a-z0-9]{6} does not exist: it was deleted, or never created/,
  );
  const good = (await createToken(srv.config)).token;
  const wrong = `${good.slice(0, 7)}${good.slice(7).split('').reverse().join('')}`;
  refused(
    await postJoin(srv.config, { token: wrong, nodeName: 'j3', nodeKey: key }),
    401,
    /the secret of join token [a-z0-9]{6} is wrong/,
  );
  refused(
    await postJoin(srv.config, { token: 'nope', nodeName: 'j3', nodeKey: key }),
    401,
    /not of the form <id>\.<secret>/,
  );
  assert.equal((await srv.request('GET', `${API}/nodes/j3`)).status, 404, 'no refused join created a Node');
  assert.equal(
    (await srv.request('GET', `${API}/jointokens/${good.slice(0, 6)}`)).json.status.used,
    false,
    'a wrong secret does not burn the token',
  );
});

test('a bad request is 400, a bad name or key 422, another key for a joined name 409 (the token stays unused)', async () => {
  const { token } = await createToken(srv.config);
  refused(await postJoin(srv.config, { token, nodeName: 'j4' }), 400, /needs "nodeKey"/);
  refused(await srv.request('POST', '/join', '{"token":', { authorization: null }), 400, /not valid JSON/);
  refused(await postJoin(srv.config, { token, nodeName: 'Bad_Name', nodeKey: newNodeKey() }), 422, /nodeName: /);
  refused(
    await postJoin(srv.config, { token, nodeName: 'j4', site: 'Not A Site', nodeKey: newNodeKey() }),
    422,
    /site: /,
  );
  refused(
    await postJoin(srv.config, { token, nodeName: 'j4', nodeKey: newNodeKey('rsa') }),
    422,
    /nodeKey: must be an Ed25519 or ECDSA P-256 key, not rsa/,
  );
  refused(
    await postJoin(srv.config, { token, nodeName: 'j4', nodeKey: 'bm90IGEga2V5' }),
    422,
    /nodeKey: must be a public key/,
  );
  const first = (await createToken(srv.config)).token;
  assert.equal((await postJoin(srv.config, { token: first, nodeName: 'j4', nodeKey: newNodeKey() })).status, 200);
  refused(
    await postJoin(srv.config, { token, nodeName: 'j4', nodeKey: newNodeKey() }),
    409,
    /node j4 already joined with another key; .*meshctl delete node j4/,
  );
  assert.equal((await srv.request('GET', `${API}/jointokens/${token.slice(0, 6)}`)).json.status.used, false);
});

test('re-joining with the same key is idempotent: same Node, a new credential, the old one stops working', async () => {
  const key = newNodeKey();
  const a = await postJoin(srv.config, {
    token: (await createToken(srv.config)).token,
    nodeName: 'j5',
    site: 'home',
    nodeKey: key,
  });
  const uid = (await srv.request('GET', `${API}/nodes/j5`)).json.metadata.uid;
  const b = await postJoin(srv.config, { token: (await createToken(srv.config)).token, nodeName: 'j5', nodeKey: key });
  assert.equal(b.status, 200, b.text);
  assert.notEqual(b.json.credential, a.json.credential);
  const node = (await srv.request('GET', `${API}/nodes/j5`)).json;
  assert.equal(node.metadata.uid, uid);
  assert.deepEqual(node.spec, { site: 'home' });
  assert.equal((await httpRequest(asNode(srv.config, a.json.credential), 'GET', `${API}/nodes/j5`)).status, 401);
  assert.equal((await httpRequest(asNode(srv.config, b.json.credential), 'GET', `${API}/nodes/j5`)).status, 200);
});

test('deleting a Node deletes its credential: the node is refused from then on and its name is free again', async () => {
  const r = await postJoin(srv.config, {
    token: (await createToken(srv.config)).token,
    nodeName: 'j6',
    nodeKey: newNodeKey(),
  });
  assert.equal((await srv.request('DELETE', `${API}/nodes/j6`)).status, 200);
  assert.equal(secret('node.j6'), undefined);
  refused(await httpRequest(asNode(srv.config, r.json.credential), 'GET', `${API}/nodes/j6`), 401, /Unauthorized/);
  const again = await postJoin(srv.config, {
    token: (await createToken(srv.config)).token,
    nodeName: 'j6',
    nodeKey: newNodeKey(),
  });
  assert.equal(again.status, 200, 'another key may take the name once the node was deleted');
});

test('a Node deleted with propagationPolicy=Orphan takes its credential with it all the same', async () => {
  const r = await postJoin(srv.config, {
    token: (await createToken(srv.config)).token,
    nodeName: 'j7',
    nodeKey: newNodeKey(),
  });
  const node = asNode(srv.config, r.json.credential);
  assert.equal((await httpRequest(node, 'GET', `${API}/nodes/j7`)).status, 200);
  assert.equal((await srv.request('DELETE', `${API}/nodes/j7?propagationPolicy=Orphan`)).status, 200);
  refused(await httpRequest(node, 'GET', `${API}/nodes/j7`), 401, /Unauthorized/);
  const again = await postJoin(srv.config, {
    token: (await createToken(srv.config)).token,
    nodeName: 'j7',
    nodeKey: newNodeKey(),
  });
  assert.equal(again.status, 200, 'the name is free to join again');
  refused(await httpRequest(node, 'GET', `${API}/nodes/j7`), 401, /Unauthorized/);
});

test('a node may not set ownerReferences or finalizers on the events it creates', async () => {
  const r = await postJoin(srv.config, {
    token: (await createToken(srv.config)).token,
    nodeName: 'j8',
    nodeKey: newNodeKey(),
  });
  const node = asNode(srv.config, r.json.credential);
  const owner = (await srv.request('GET', `${API}/nodes/j8`)).json;
  const event = (extra: object) => ({
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Event',
    metadata: { generateName: 'j8-', ...extra },
    involvedObject: { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', name: 'j8' },
    type: 'Normal',
    reason: 'Test',
    message: 'm',
  });
  assert.equal((await httpRequest(node, 'POST', `${API}/events`, event({}))).status, 201);
  const chained = await httpRequest(
    node,
    'POST',
    `${API}/events`,
    event({
      ownerReferences: [{ apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', name: 'j8', uid: owner.metadata.uid }],
    }),
  );
  refused(chained, 403, /ownerReferences or finalizers/);
  refused(
    await httpRequest(node, 'POST', `${API}/events`, event({ finalizers: ['x'] })),
    403,
    /ownerReferences or finalizers/,
  );
});
