// Every error the API server answers, as a Kubernetes Status with the right code, reason and causes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type HttpResult, type TestServer } from '../harness.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const MERGE = { 'content-type': 'application/merge-patch+json' };

function node(name: string, spec: Record<string, unknown> = { site: 'home' }): Record<string, unknown> {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name }, spec };
}

/** Asserts a Status error response and returns it. */
function status(r: HttpResult, code: number, reason: string): HttpResult['json'] {
  assert.equal(r.status, code, r.text);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  assert.equal(r.json.kind, 'Status');
  assert.equal(r.json.apiVersion, 'v1');
  assert.equal(r.json.status, 'Failure');
  assert.equal(r.json.reason, reason);
  assert.equal(r.json.code, code);
  assert.equal(typeof r.json.message, 'string');
  return r.json;
}

let srv: TestServer;
before(async () => {
  srv = await startServer({ tokens: { 'node-a-token': { kind: 'node', name: 'a' } } });
});
after(() => srv.stop());

test('404 NotFound: missing objects, unknown kinds, paths and subresources', async () => {
  const s = status(await srv.request('GET', `${API}/nodes/missing`), 404, 'NotFound');
  assert.equal(s.message, 'nodes.meshctl.dev "missing" not found');
  assert.equal(s.details.name, 'missing');
  status(await srv.request('PUT', `${API}/nodes/missing`, node('missing')), 404, 'NotFound');
  status(await srv.request('PATCH', `${API}/nodes/missing`, { spec: {} }, MERGE), 404, 'NotFound');
  status(await srv.request('DELETE', `${API}/nodes/missing`), 404, 'NotFound');
  status(await srv.request('GET', `${API}/widgets`), 404, 'NotFound');
  status(await srv.request('GET', '/nope'), 404, 'NotFound');
  status(await srv.request('GET', '/apis/other.dev/v1/nodes'), 404, 'NotFound');
  status(await srv.request('GET', `${API}/nodes/a/scale`), 404, 'NotFound');
  status(await srv.request('GET', `${API}/nodes/a/status/x`), 404, 'NotFound');
  status(await srv.request('GET', `${API}/events/a/status`), 404, 'NotFound');
});

test('409 AlreadyExists and Conflict (stale resourceVersion on PUT, /status and merge patch)', async () => {
  const c = (await srv.request('POST', `${API}/nodes`, node('cf-a'))).json;
  const dup = status(await srv.request('POST', `${API}/nodes`, node('cf-a')), 409, 'AlreadyExists');
  assert.equal(dup.message, 'nodes.meshctl.dev "cf-a" already exists');
  const u = (await srv.request('PUT', `${API}/nodes/cf-a`, { ...c, spec: { site: 'two' } })).json;
  assert.notEqual(u.metadata.resourceVersion, c.metadata.resourceVersion);
  const stale = status(
    await srv.request('PUT', `${API}/nodes/cf-a`, { ...c, spec: { site: 'three' } }),
    409,
    'Conflict',
  );
  assert.match(stale.message, /^Operation cannot be fulfilled on nodes\.meshctl\.dev "cf-a"/);
  status(await srv.request('PUT', `${API}/nodes/cf-a/status`, { ...c, status: { reachable: true } }), 409, 'Conflict');
  status(
    await srv.request(
      'PATCH',
      `${API}/nodes/cf-a`,
      { metadata: { resourceVersion: c.metadata.resourceVersion }, spec: { site: 'x' } },
      MERGE,
    ),
    409,
    'Conflict',
  );
  status(
    await srv.request(
      'PATCH',
      `${API}/nodes/cf-a/status`,
      { metadata: { resourceVersion: c.metadata.resourceVersion }, status: { reachable: true } },
      MERGE,
    ),
    409,
    'Conflict',
  );
  assert.equal((await srv.request('GET', `${API}/nodes/cf-a`)).json.spec.site, 'two');
});

test('422 Invalid with field causes, on create, update, patch and /status', async () => {
  const s = status(
    await srv.request('POST', `${API}/nodes`, node('inv-a', { site: 'Bad Site!', bogus: 1 })),
    422,
    'Invalid',
  );
  assert.deepEqual(s.details.causes.map((c: { field: string }) => c.field).sort(), ['spec.bogus', 'spec.site']);
  assert.ok(s.details.causes.every((c: { message: string }) => c.message.length > 0));
  assert.equal(s.details.name, 'inv-a');
  assert.match(s.message, /^Node\.meshctl\.dev "inv-a" is invalid: /);
  const mesh = status(
    await srv.request('POST', `${API}/meshes`, {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Mesh',
      metadata: { name: 'other' },
      spec: {},
    }),
    422,
    'Invalid',
  );
  assert.equal(mesh.details.causes[0].field, 'metadata.name');
  assert.match(mesh.details.causes[0].message, /singleton/);
  const noName = status(
    await srv.request('POST', `${API}/nodes`, { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: {} }),
    422,
    'Invalid',
  );
  assert.equal(noName.details.causes[0].field, 'metadata.name');
  status(await srv.request('POST', `${API}/nodes`, node('Upper_Case')), 422, 'Invalid');
  const c = (await srv.request('POST', `${API}/nodes`, node('inv-b'))).json;
  status(await srv.request('PUT', `${API}/nodes/inv-b`, { ...c, spec: { site: 'BAD' } }), 422, 'Invalid');
  const p = status(
    await srv.request('PATCH', `${API}/nodes/inv-b`, { spec: { endpoint: 'no-port' } }, MERGE),
    422,
    'Invalid',
  );
  assert.equal(p.details.causes[0].field, 'spec.endpoint');
  const st = status(
    await srv.request('PATCH', `${API}/nodes/inv-b/status`, { status: { reachable: 'yes' } }, MERGE),
    422,
    'Invalid',
  );
  assert.equal(st.details.causes[0].field, 'status.reachable');
  assert.deepEqual((await srv.request('GET', `${API}/nodes/inv-b`)).json, c);
});

test('400 BadRequest: malformed JSON and YAML, wrong kind/apiVersion/name, bad parameters', async () => {
  assert.match(
    status(
      await srv.request('POST', `${API}/nodes`, '{"apiVersion": "meshctl.dev/v1alpha1", "kind": '),
      400,
      'BadRequest',
    ).message,
    /not valid JSON/,
  );
  assert.match(
    status(
      await srv.request('POST', `${API}/nodes`, 'kind: [Node\nmetadata: {', { 'content-type': 'application/yaml' }),
      400,
      'BadRequest',
    ).message,
    /not valid YAML/,
  );
  status(
    await srv.request('POST', `${API}/nodes`, 'a: 1\n---\nb: 2\n', { 'content-type': 'application/yaml' }),
    400,
    'BadRequest',
  );
  status(await srv.request('POST', `${API}/nodes`, '[1,2]'), 400, 'BadRequest');
  status(await srv.request('POST', `${API}/nodes`, ''), 400, 'BadRequest');
  status(await srv.request('PATCH', `${API}/nodes/whatever`, '{nope', MERGE), 400, 'BadRequest');
  const kind = status(await srv.request('POST', `${API}/nodes`, { ...node('k'), kind: 'Module' }), 400, 'BadRequest');
  assert.match(kind.message, /kind in the body \("Module"\) does not match the kind of the URL \(Node/);
  const av = status(await srv.request('POST', `${API}/nodes`, { ...node('k'), apiVersion: 'v1' }), 400, 'BadRequest');
  assert.match(av.message, /apiVersion in the body \("v1"\) does not match/);
  const c = (await srv.request('POST', `${API}/nodes`, node('br-a'))).json;
  const name = status(
    await srv.request('PUT', `${API}/nodes/br-a`, { ...c, metadata: { ...c.metadata, name: 'br-b' } }),
    400,
    'BadRequest',
  );
  assert.match(name.message, /does not match the name on the URL/);
  status(await srv.request('PATCH', `${API}/nodes/br-a`, { metadata: { name: 'br-b' } }, MERGE), 400, 'BadRequest');
  status(await srv.request('GET', `${API}/nodes?watch=1&resourceVersion=abc`), 400, 'BadRequest');
  status(await srv.request('GET', `${API}/nodes?watch=1&timeoutSeconds=-1`), 400, 'BadRequest');
  status(
    await srv.request('GET', `${API}/nodes?watch=1&labelSelector=${encodeURIComponent('a in b')}`),
    400,
    'BadRequest',
  );
  status(
    await srv.request('GET', `${API}/nodes?includeObject=All`, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    }),
    400,
    'BadRequest',
  );
  status(await srv.request('GET', `${API}/nodes/%E0%A4%A`), 400, 'BadRequest');
  const deep = '{"a":'.repeat(200) + '1' + '}'.repeat(200);
  status(await srv.request('POST', `${API}/nodes`, deep), 400, 'BadRequest');
});

test('413 for oversized bodies (declared or streamed); the connection stays usable', async () => {
  const big = Buffer.alloc(4 * 1024 * 1024, 0x20);
  const s = status(await srv.request('POST', `${API}/nodes`, big), 413, 'RequestEntityTooLarge');
  assert.match(s.message, /3145728 bytes/);
  const small = await startServer({ maxBodyBytes: 1024 });
  try {
    const body = JSON.stringify({ ...node('big'), metadata: { name: 'big', annotations: { pad: 'x'.repeat(4000) } } });
    status(
      await small.request('POST', `${API}/nodes`, body, { 'transfer-encoding': 'chunked' }),
      413,
      'RequestEntityTooLarge',
    );
    status(await small.request('PUT', `${API}/nodes/big`, body), 413, 'RequestEntityTooLarge');
    assert.equal((await small.request('POST', `${API}/nodes`, node('fits'))).status, 201);
    assert.equal((await small.request('GET', `${API}/nodes/big`)).status, 404);
  } finally {
    await small.stop();
  }
});

test('415 for strategic merge patch and other unsupported patch and body types', async () => {
  await srv.request('POST', `${API}/nodes`, node('um-a'));
  for (const type of ['application/strategic-merge-patch+json', 'application/json', 'text/plain']) {
    const s = status(
      await srv.request('PATCH', `${API}/nodes/um-a`, '[]', { 'content-type': type }),
      415,
      'UnsupportedMediaType',
    );
    assert.match(
      s.message,
      /application\/merge-patch\+json, application\/json-patch\+json, application\/apply-patch\+yaml/,
    );
  }
  status(await srv.request('POST', `${API}/nodes`, 'x', { 'content-type': 'text/plain' }), 415, 'UnsupportedMediaType');
});

test('401 without a valid token, everywhere but the health checks', async () => {
  for (const authorization of [null, 'Bearer wrong', 'Basic YWRtaW46YWRtaW4=', 'Bearer', `Bearer ${srv.adminToken}x`]) {
    status(await srv.request('GET', `${API}/nodes`, undefined, { authorization }), 401, 'Unauthorized');
    status(await srv.request('GET', '/apis', undefined, { authorization }), 401, 'Unauthorized');
    status(await srv.request('GET', '/nope', undefined, { authorization }), 401, 'Unauthorized');
  }
  assert.equal((await srv.request('GET', '/readyz', undefined, { authorization: 'Bearer wrong' })).status, 200);
});

test('403 Forbidden names what a non-admin identity was refused', async () => {
  const auth = { authorization: 'Bearer node-a-token' };
  const s = status(await srv.request('GET', `${API}/nodes/a`, undefined, auth), 403, 'Forbidden');
  assert.equal(
    s.message,
    'nodes.meshctl.dev "a" is forbidden: User "system:node:a" cannot get resource "nodes" in API group "meshctl.dev" at the cluster scope',
  );
  const st = status(
    await srv.request('PATCH', `${API}/nodes/a/status`, { status: {} }, { ...auth, ...MERGE }),
    403,
    'Forbidden',
  );
  assert.match(st.message, /cannot patch resource "nodes\/status"/);
  assert.match(
    status(await srv.request('GET', `${API}/nodes?watch=1`, undefined, auth), 403, 'Forbidden').message,
    /cannot watch resource "nodes"/,
  );
  assert.match(
    status(await srv.request('GET', '/apis', undefined, auth), 403, 'Forbidden').message,
    /cannot get path "\/apis"/,
  );
  assert.equal((await srv.request('GET', `${API}/nodes/a`)).status, 404, 'the admin is not refused');
});

test('405 for methods a path does not support, with an Allow header', async () => {
  const cases: [string, string, string][] = [
    ['POST', `${API}/nodes/x`, 'GET, PUT, PATCH, DELETE'],
    ['DELETE', `${API}/nodes`, 'GET, POST'],
    ['PUT', `${API}/nodes`, 'GET, POST'],
    ['DELETE', `${API}/nodes/x/status`, 'GET, PUT, PATCH'],
    ['POST', '/version', 'GET, HEAD'],
    ['PUT', '/healthz', 'GET, HEAD'],
    ['HEAD', `${API}/nodes`, 'GET, POST'],
  ];
  for (const [method, path, allow] of cases) {
    const r = await srv.request(method, path, method === 'DELETE' || method === 'HEAD' ? undefined : {});
    if (method === 'HEAD') assert.equal(r.status, 405);
    else status(r, 405, 'MethodNotAllowed');
    assert.equal(r.headers.allow, allow, `${method} ${path}`);
  }
});

test('406 when only other representations are acceptable', async () => {
  status(
    await srv.request('GET', `${API}/nodes`, undefined, { accept: 'application/vnd.kubernetes.protobuf' }),
    406,
    'NotAcceptable',
  );
  assert.equal((await srv.request('GET', `${API}/nodes`, undefined, { accept: 'text/html,*/*;q=0.8' })).status, 200);
});

test('an unexpected exception is a generic 500; its stack goes to the log only', async () => {
  const logged: Record<string, unknown>[] = [];
  const broken = await startServer({
    authorize: () => {
      throw new Error('secret detail');
    },
    logger: { info: () => {}, error: (msg, f) => logged.push({ msg, ...f }) },
  });
  try {
    const s = status(await broken.request('GET', `${API}/nodes`), 500, 'InternalError');
    assert.doesNotMatch(s.message, /secret detail/);
    assert.equal(logged.length, 1);
    assert.match(String(logged[0].stack), /secret detail/);
    assert.equal((await broken.request('GET', '/healthz')).status, 200);
  } finally {
    await broken.stop();
  }
});
