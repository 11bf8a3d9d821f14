// No contended role (ADR 0053), at the API: a second assignment of `control-plane` or `overlay-hub` is
// refused with a message that says the role is declared, names its node and says how to move it; what runs
// the control plane, and the Mesh singleton, cannot be deleted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../../../test/harness.ts';

const BASE = '/apis/meshctl.dev/v1alpha1/assignments';
const assignment = (name: string, module: string, node: string): Record<string, unknown> => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Assignment',
  metadata: { name },
  spec: { module, node },
});

describe('admission: no contended role', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startServer();
  });
  after(async () => {
    await srv.stop();
  });

  it('refuses a second assignment of control-plane with 422, naming the holder and how to move it', async () => {
    assert.equal((await srv.request('POST', BASE, assignment('control-plane', 'control-plane', 'a'))).status, 201);
    const r = await srv.request('POST', BASE, assignment('cp-on-b', 'control-plane', 'b'));
    assert.equal(r.status, 422);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'Invalid');
    const cause = r.json.details.causes[0];
    assert.equal(cause.field, 'spec.module');
    assert.match(cause.message, /declared, not elected/);
    assert.match(cause.message, /node "a" holds it by assignment "control-plane"/);
    assert.match(
      cause.message,
      /Moving the control plane moves its store: restore a backup on the new node .*mesh-control-plane --restore/,
    );
    assert.doesNotMatch(cause.message, /delete assignment/, 'deleting it would stop the API that answers');
    assert.match(r.json.message, /declared, not elected/);
    assert.equal((await srv.request('GET', `${BASE}/cp-on-b`)).status, 404);
  });

  it('refuses a dry-run too, and a second assignment on the same node', async () => {
    const r = await srv.request('POST', `${BASE}?dryRun=All`, assignment('cp-again', 'control-plane', 'a'));
    assert.equal(r.status, 422);
  });

  it('refuses turning another assignment into a role by update or patch', async () => {
    assert.equal((await srv.request('POST', BASE, assignment('web-on-b', 'web', 'b'))).status, 201);
    const put = await srv.request('PUT', `${BASE}/web-on-b`, assignment('web-on-b', 'control-plane', 'b'));
    assert.equal(put.status, 422);
    assert.match(put.json.details.causes[0].message, /node "a" holds it/);
    const patch = await srv.request(
      'PATCH',
      `${BASE}/web-on-b`,
      { spec: { module: 'control-plane' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(patch.status, 422);
    assert.equal((await srv.request('GET', `${BASE}/web-on-b`)).json.spec.module, 'web');
  });

  it('lets the holder itself be updated, and any number of other modules', async () => {
    const cur = (await srv.request('GET', `${BASE}/control-plane`)).json;
    const put = await srv.request('PUT', `${BASE}/control-plane`, {
      ...cur,
      metadata: { ...cur.metadata, labels: { role: 'cp' } },
    });
    assert.equal(put.status, 200);
    assert.equal((await srv.request('POST', BASE, assignment('web-on-a', 'web', 'a'))).status, 201);
  });

  it('refuses deleting what runs the control plane (its assignment or module) with 403 pointing to --restore', async () => {
    for (const [plural, name] of [
      ['assignments', 'control-plane'],
      ['modules', 'control-plane'],
    ] as const) {
      if (plural === 'modules') {
        await srv.request('POST', '/apis/meshctl.dev/v1alpha1/modules', {
          apiVersion: 'meshctl.dev/v1alpha1',
          kind: 'Module',
          metadata: { name },
          spec: { version: '1', resources: [] },
        });
      }
      const r = await srv.request('DELETE', `/apis/meshctl.dev/v1alpha1/${plural}/${name}`);
      assert.equal(r.status, 403, r.text);
      assert.match(r.json.message, /runs this control plane.*no failover.*mesh-control-plane --restore/);
      assert.equal(
        (await srv.request('GET', `/apis/meshctl.dev/v1alpha1/${plural}/${name}`)).status,
        200,
        'still there',
      );
    }
  });

  it('refuses deleting the Mesh singleton with 403 and the reason; it stays, and its settings can still change', async () => {
    const MESH = '/apis/meshctl.dev/v1alpha1/meshes/mesh';
    const created = await srv.request('POST', '/apis/meshctl.dev/v1alpha1/meshes', {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Mesh',
      metadata: { name: 'mesh' },
      spec: {},
    });
    assert.equal(created.status, 201, created.text);
    for (const path of [MESH, `${MESH}?dryRun=All`]) {
      const r = await srv.request('DELETE', path);
      assert.equal(r.status, 403, r.text);
      assert.equal(r.json.reason, 'Forbidden');
      assert.match(
        r.json.message,
        /^meshes\.meshctl\.dev "mesh" is forbidden: the Mesh is the singleton every mesh has/,
      );
      assert.match(r.json.message, /names the control-plane node.*Change its settings instead/);
    }
    const still = await srv.request('GET', MESH);
    assert.equal(still.status, 200);
    assert.equal(still.json.metadata.uid, created.json.metadata.uid);
    assert.equal(still.json.metadata.resourceVersion, created.json.metadata.resourceVersion);
    const patched = await srv.request(
      'PATCH',
      MESH,
      { spec: { heartbeatInterval: '5s' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(patched.status, 200, patched.text);
  });

  it('moves a role by deleting the old assignment first, then creating the new one', async () => {
    assert.equal((await srv.request('POST', BASE, assignment('overlay-hub', 'overlay-hub', 'a'))).status, 201);
    const refused = await srv.request('POST', BASE, assignment('hub-on-b', 'overlay-hub', 'b'));
    assert.equal(refused.status, 422);
    assert.match(
      refused.json.details.causes[0].message,
      /overlay hub role is declared, not elected.*node "a" holds it by assignment "overlay-hub"/,
    );
    assert.equal((await srv.request('DELETE', `${BASE}/overlay-hub`)).status, 200);
    assert.equal((await srv.request('POST', BASE, assignment('hub-on-b', 'overlay-hub', 'b'))).status, 201);
  });

  it('lets only one of three concurrent creates of the same role through', async () => {
    const results = await Promise.all(
      ['x', 'y', 'z'].map((n) => srv.request('POST', BASE, assignment(`hub-${n}`, 'overlay-hub', n))),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [422, 422, 422]);
    await srv.request('DELETE', `${BASE}/hub-on-b`);
    const again = await Promise.all(
      ['x', 'y', 'z'].map((n) => srv.request('POST', BASE, assignment(`hub2-${n}`, 'overlay-hub', n))),
    );
    assert.deepEqual(again.map((r) => r.status).sort(), [201, 422, 422]);
  });
});
