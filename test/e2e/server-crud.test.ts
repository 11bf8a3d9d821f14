// The API server's happy paths over HTTPS with a real store: discovery, CRUD, status separation,
// generation, merge patch, selectors, dryRun, server-side Tables.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../harness.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const MERGE = { 'content-type': 'application/merge-patch+json' };

function node(
  name: string,
  spec: Record<string, unknown> = { site: 'home' },
  labels: Record<string, string> = {},
): Record<string, unknown> {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name, labels }, spec };
}

let srv: TestServer;
before(async () => {
  srv = await startServer();
});
after(() => srv.stop());

test('health endpoints answer without a token; discovery describes every kind', async () => {
  for (const p of ['/healthz', '/readyz', '/livez']) {
    const r = await srv.request('GET', p, undefined, { authorization: null });
    assert.equal(r.status, 200);
    assert.equal(r.text, 'ok');
  }
  const v = await srv.request('GET', '/version');
  assert.equal(v.json.major, '1');
  assert.equal(v.json.minor, '32');
  assert.match(v.json.gitVersion, /^v1\.32\.0-meshctl\./);
  assert.equal(typeof v.json.goVersion, 'string');
  assert.equal(typeof v.json.meshctlVersion, 'string');
  assert.deepEqual((await srv.request('GET', '/api')).json, {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [],
  });
  const groups = (await srv.request('GET', '/apis')).json;
  assert.equal(groups.kind, 'APIGroupList');
  assert.deepEqual(groups.groups[0].preferredVersion, { groupVersion: 'meshctl.dev/v1alpha1', version: 'v1alpha1' });
  const list = (await srv.request('GET', API)).json;
  assert.equal(list.kind, 'APIResourceList');
  const nodes = list.resources.find((r: { name: string }) => r.name === 'nodes');
  assert.deepEqual(nodes, {
    name: 'nodes',
    singularName: 'node',
    namespaced: false,
    kind: 'Node',
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: ['no'],
    categories: ['all', 'meshctl'],
  });
  assert.ok(list.resources.some((r: { name: string }) => r.name === 'nodes/status'));
  assert.ok(!list.resources.some((r: { name: string }) => r.name === 'events/status'));
  assert.equal((await srv.request('GET', '/apis/meshctl.dev')).json.kind, 'APIGroup');
});

test('create, get, list, update and delete a Node', async () => {
  const c = await srv.request('POST', `${API}/nodes`, node('crud-a'));
  assert.equal(c.status, 201, c.text);
  const m = c.json.metadata;
  assert.equal(m.name, 'crud-a');
  assert.equal(m.generation, 1);
  assert.match(m.uid, /^[0-9a-f-]{36}$/);
  assert.match(m.resourceVersion, /^\d+$/);
  assert.ok(!Number.isNaN(Date.parse(m.creationTimestamp)));
  assert.deepEqual((await srv.request('GET', `${API}/nodes/crud-a`)).json, c.json);
  const list = await srv.request('GET', `${API}/nodes`);
  assert.equal(list.json.kind, 'NodeList');
  assert.equal(list.json.apiVersion, 'meshctl.dev/v1alpha1');
  assert.ok(list.json.items.some((o: { metadata: { name: string } }) => o.metadata.name === 'crud-a'));
  assert.ok(Number(list.json.metadata.resourceVersion) >= Number(m.resourceVersion));
  const u = await srv.request('PUT', `${API}/nodes/crud-a`, { ...c.json, spec: { site: 'office' } });
  assert.equal(u.status, 200, u.text);
  assert.equal(u.json.spec.site, 'office');
  assert.equal(u.json.metadata.generation, 2);
  const d = await srv.request('DELETE', `${API}/nodes/crud-a`);
  assert.equal(d.status, 200, d.text);
  assert.equal(d.json.metadata.name, 'crud-a');
  assert.equal((await srv.request('GET', `${API}/nodes/crud-a`)).status, 404);
});

test('YAML bodies are accepted and generateName names the object', async () => {
  const yaml = 'apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  generateName: gen-\nspec:\n  site: lab\n';
  const r = await srv.request('POST', `${API}/nodes`, yaml, { 'content-type': 'application/yaml' });
  assert.equal(r.status, 201, r.text);
  assert.match(r.json.metadata.name, /^gen-[a-z0-9]{5}$/);
  assert.equal(r.json.spec.site, 'lab');
});

test('generation changes on spec changes only', async () => {
  const c = (await srv.request('POST', `${API}/nodes`, node('gen-a'))).json;
  const labelled = (await srv.request('PATCH', `${API}/nodes/gen-a`, { metadata: { labels: { x: 'y' } } }, MERGE)).json;
  assert.equal(labelled.metadata.generation, 1);
  assert.notEqual(labelled.metadata.resourceVersion, c.metadata.resourceVersion);
  const status = (await srv.request('PATCH', `${API}/nodes/gen-a/status`, { status: { reachable: true } }, MERGE)).json;
  assert.equal(status.metadata.generation, 1);
  const spec = (await srv.request('PATCH', `${API}/nodes/gen-a`, { spec: { site: 'away' } }, MERGE)).json;
  assert.equal(spec.metadata.generation, 2);
});

test('a /status write is judged by its status alone: fields it keeps as stored are not judged again', async () => {
  // Stored past admission, as an object valid under an older schema would be (read as data, as from an old store).
  await srv.store.create('nodes', JSON.parse(JSON.stringify(node('old-a', { site: 42 }))));
  const ok = await srv.request('PATCH', `${API}/nodes/old-a/status`, { status: { reachable: true } }, MERGE);
  assert.equal(ok.status, 200, ok.text);
  const bad = await srv.request('PATCH', `${API}/nodes/old-a/status`, { status: { reachable: 'yes' } }, MERGE);
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(
    bad.json.details.causes.map((c: { field: string }) => c.field),
    ['status.reachable'],
  );
  const main = await srv.request('PATCH', `${API}/nodes/old-a`, { metadata: { labels: { a: 'b' } } }, MERGE);
  assert.equal(main.status, 422, 'a write of the main resource judges the whole object');
  assert.match(main.text, /spec\.site/);
});

test('the main resource ignores status; /status ignores everything but status', async () => {
  const c = (await srv.request('POST', `${API}/nodes`, { ...node('st-a'), status: { reachable: true } })).json;
  assert.equal(c.status, undefined, 'status is not set on create');
  const s = await srv.request('PUT', `${API}/nodes/st-a/status`, {
    ...c,
    spec: { site: 'ignored' },
    metadata: { ...c.metadata, labels: { no: 'pe' } },
    status: { reachable: true, agentVersion: '1.0' },
  });
  assert.equal(s.status, 200, s.text);
  assert.deepEqual(s.json.status, { reachable: true, agentVersion: '1.0' });
  assert.equal(s.json.spec.site, 'home');
  assert.deepEqual(s.json.metadata.labels ?? {}, {});
  const m = await srv.request('PUT', `${API}/nodes/st-a`, {
    ...s.json,
    spec: { site: 'moved' },
    status: { reachable: false },
  });
  assert.equal(m.status, 200, m.text);
  assert.equal(m.json.spec.site, 'moved');
  assert.deepEqual(m.json.status, { reachable: true, agentVersion: '1.0' });
  const p = (
    await srv.request('PATCH', `${API}/nodes/st-a`, { spec: { site: 'again' }, status: { reachable: false } }, MERGE)
  ).json;
  assert.equal(p.spec.site, 'again');
  assert.equal(p.status.reachable, true);
  const ps = (
    await srv.request(
      'PATCH',
      `${API}/nodes/st-a/status`,
      { spec: { site: 'nope' }, status: { agentVersion: null } },
      MERGE,
    )
  ).json;
  assert.equal(ps.spec.site, 'again');
  assert.deepEqual(ps.status, { reachable: true });
  assert.deepEqual((await srv.request('GET', `${API}/nodes/st-a/status`)).json, ps);
});

test('merge patch: null deletes, objects merge, arrays replace', async () => {
  await srv.request(
    'POST',
    `${API}/nodes`,
    node('mp-a', { site: 'home', endpoint: '192.0.2.1:51820' }, { a: '1', b: '2' }),
  );
  const r = await srv.request(
    'PATCH',
    `${API}/nodes/mp-a`,
    { metadata: { labels: { a: null, c: '3' } }, spec: { endpoint: null } },
    MERGE,
  );
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.metadata.labels, { b: '2', c: '3' });
  assert.deepEqual(r.json.spec, { site: 'home' });
  const fin = await srv.request('PATCH', `${API}/nodes/mp-a`, { metadata: { finalizers: ['x/y', 'x/z'] } }, MERGE);
  assert.deepEqual(fin.json.metadata.finalizers, ['x/y', 'x/z']);
  const fin2 = await srv.request('PATCH', `${API}/nodes/mp-a`, { metadata: { finalizers: ['x/z'] } }, MERGE);
  assert.deepEqual(fin2.json.metadata.finalizers, ['x/z']);
  const pinned = await srv.request(
    'PATCH',
    `${API}/nodes/mp-a`,
    { metadata: { resourceVersion: fin2.json.metadata.resourceVersion, finalizers: null } },
    MERGE,
  );
  assert.equal(pinned.status, 200, pinned.text);
  assert.equal(pinned.json.metadata.finalizers, undefined);
});

test('list with label and field selectors', async () => {
  await srv.request('POST', `${API}/nodes`, node('sel-a', { site: 'north' }, { tier: 'web', env: 'prod' }));
  await srv.request('POST', `${API}/nodes`, node('sel-b', { site: 'south' }, { tier: 'db', env: 'prod' }));
  await srv.request('POST', `${API}/nodes`, node('sel-c', { site: 'north' }, { tier: 'web', env: 'dev' }));
  const names = async (q: string): Promise<string[]> => {
    const r = await srv.request('GET', `${API}/nodes?${q}`);
    assert.equal(r.status, 200, r.text);
    return r.json.items
      .map((o: { metadata: { name: string } }) => o.metadata.name)
      .filter((n: string) => n.startsWith('sel-'));
  };
  assert.deepEqual(await names('labelSelector=env%3Dprod'), ['sel-a', 'sel-b']);
  assert.deepEqual(await names('labelSelector=tier%3Dweb,env!%3Dprod'), ['sel-c']);
  assert.deepEqual(await names(`labelSelector=${encodeURIComponent('tier in (db,cache)')}`), ['sel-b']);
  assert.deepEqual(await names('fieldSelector=spec.site%3Dnorth'), ['sel-a', 'sel-c']);
  assert.deepEqual(await names('fieldSelector=metadata.name%3Dsel-b'), ['sel-b']);
  assert.deepEqual(await names('fieldSelector=spec.site%3Dnorth&labelSelector=env%3Ddev'), ['sel-c']);
  assert.equal((await srv.request('GET', `${API}/nodes?labelSelector=${encodeURIComponent('a in b')}`)).status, 400);
});

test('dryRun=All validates and answers but writes nothing', async () => {
  const rv0 = srv.store.resourceVersion();
  const c = await srv.request('POST', `${API}/nodes?dryRun=All`, node('dry-a'));
  assert.equal(c.status, 201, c.text);
  assert.equal((await srv.request('GET', `${API}/nodes/dry-a`)).status, 404);
  assert.equal((await srv.request('POST', `${API}/nodes?dryRun=All`, node('dry-a', { site: 'Bad!' }))).status, 422);
  const real = (await srv.request('POST', `${API}/nodes`, node('dry-b'))).json;
  const rv1 = srv.store.resourceVersion();
  assert.ok(Number(rv1) > Number(rv0));
  assert.equal(
    (await srv.request('PUT', `${API}/nodes/dry-b?dryRun=All`, { ...real, spec: { site: 'x' } })).json.spec.site,
    'x',
  );
  assert.equal(
    (await srv.request('PATCH', `${API}/nodes/dry-b?dryRun=All`, { spec: { site: 'y' } }, MERGE)).json.spec.site,
    'y',
  );
  assert.equal(
    (await srv.request('PATCH', `${API}/nodes/dry-b/status?dryRun=All`, { status: { reachable: true } }, MERGE)).status,
    200,
  );
  assert.equal((await srv.request('DELETE', `${API}/nodes/dry-b?dryRun=All`)).status, 200);
  assert.equal(
    (await srv.request('DELETE', `${API}/nodes/dry-b`, { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] }))
      .status,
    200,
  );
  assert.deepEqual((await srv.request('GET', `${API}/nodes/dry-b`)).json, real);
  assert.equal(srv.store.resourceVersion(), rv1);
  assert.equal((await srv.request('POST', `${API}/nodes?dryRun=Some`, node('dry-c'))).status, 400);
});

test('delete honours preconditions and propagationPolicy', async () => {
  const c = (await srv.request('POST', `${API}/nodes`, node('del-a'))).json;
  const wrongUid = await srv.request('DELETE', `${API}/nodes/del-a`, {
    preconditions: { uid: '00000000-0000-0000-0000-000000000000' },
  });
  assert.equal(wrongUid.status, 409);
  assert.equal(wrongUid.json.reason, 'Conflict');
  assert.equal((await srv.request('DELETE', `${API}/nodes/del-a?propagationPolicy=Sideways`)).status, 400);
  const ok = await srv.request('DELETE', `${API}/nodes/del-a?propagationPolicy=Orphan`, {
    preconditions: { uid: c.metadata.uid, resourceVersion: c.metadata.resourceVersion },
  });
  assert.equal(ok.status, 200, ok.text);
});

test('kubectl-style Table responses carry the kind columns', async () => {
  await srv.request('POST', `${API}/nodes`, node('tbl-a', { site: 'home', endpoint: '192.0.2.7:51820' }));
  const r = await srv.request('GET', `${API}/nodes?fieldSelector=metadata.name%3Dtbl-a`, undefined, { accept: TABLE });
  assert.equal(r.status, 200, r.text);
  assert.match(String(r.headers['content-type']), /as=Table/);
  assert.equal(r.json.kind, 'Table');
  assert.equal(r.json.apiVersion, 'meta.k8s.io/v1');
  const cols = r.json.columnDefinitions.map((c: { name: string }) => c.name);
  assert.deepEqual(cols, [
    'Name',
    'Site',
    'Reachable',
    'Last Seen',
    'Desired',
    'Applied',
    'Declaration',
    'Endpoint',
    'Overlay IP',
    'Public Key',
    'Agent',
    'Age',
  ]);
  assert.equal(r.json.columnDefinitions[7].priority, 1);
  const row = r.json.rows[0];
  assert.deepEqual(row.cells.slice(0, 2), ['tbl-a', 'home']);
  assert.equal(row.cells[7], '192.0.2.7:51820');
  assert.match(row.cells[11], /^\d+s$/);
  assert.equal(row.object.kind, 'PartialObjectMetadata');
  assert.equal(row.object.metadata.name, 'tbl-a');
  const full = await srv.request('GET', `${API}/nodes/tbl-a?includeObject=Object`, undefined, { accept: TABLE });
  assert.equal(full.json.rows.length, 1);
  assert.equal(full.json.rows[0].object.kind, 'Node');
  const none = await srv.request('GET', `${API}/nodes/tbl-a?includeObject=None`, undefined, { accept: TABLE });
  assert.equal(none.json.rows[0].object, undefined);
  assert.equal(
    (await srv.request('GET', `${API}/nodes/tbl-a`, undefined, { accept: 'application/json' })).json.kind,
    'Node',
  );
});
