// What kubectl reads besides discovery, against the real server: the OpenAPI documents, and the core/v1 view
// of Events (only `events` under /api/v1).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStream, startServer, type TestServer } from '../harness.ts';
import { KINDS } from '../../api/v1alpha1/kinds.ts';

const API = '/apis/meshctl.dev/v1alpha1';

let srv: TestServer;
before(async () => {
  srv = await startServer();
});
after(async () => {
  await srv.stop();
});

test('OpenAPI v3: the root names our group-version with a hash; its document has every kind with its GVK', async () => {
  const root = await srv.request('GET', '/openapi/v3');
  assert.equal(root.status, 200, root.text);
  const url = root.json.paths['apis/meshctl.dev/v1alpha1'].serverRelativeURL as string;
  assert.match(url, /^\/openapi\/v3\/apis\/meshctl\.dev\/v1alpha1\?hash=[0-9A-F]{128}$/);
  const doc = await srv.request('GET', url);
  assert.equal(doc.status, 200, doc.text);
  assert.equal(doc.json.openapi, '3.0.0');
  const schemas = doc.json.components.schemas;
  for (const k of KINDS) {
    const s = schemas[`dev.meshctl.v1alpha1.${k.kind}`];
    assert.ok(s, `no schema for ${k.kind}`);
    assert.deepEqual(s['x-kubernetes-group-version-kind'], [
      { group: 'meshctl.dev', version: 'v1alpha1', kind: k.kind },
    ]);
    const patch = doc.json.paths[`${API}/${k.plural}/{name}`].patch;
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], {
      group: 'meshctl.dev',
      version: 'v1alpha1',
      kind: k.kind,
    });
    const params = patch.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    assert.ok(params.includes('query:fieldValidation'), `PATCH ${k.plural} names fieldValidation`);
    assert.ok(!('application/strategic-merge-patch+json' in patch.requestBody.content), 'no strategic merge patch');
  }
  const node = schemas['dev.meshctl.v1alpha1.Node'];
  assert.deepEqual(node.properties.metadata, { $ref: '#/components/schemas/dev.meshctl.v1alpha1.ObjectMeta' });
  assert.deepEqual(node.properties.kind, { enum: ['Node'], type: 'string' });
  assert.equal(
    node.properties.spec.properties.endpoint.allOf[0].$ref,
    '#/components/schemas/dev.meshctl.v1alpha1.Endpoint',
  );
  const coreUrl = root.json.paths['api/v1'].serverRelativeURL as string;
  assert.match(coreUrl, /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
  const core = (await srv.request('GET', coreUrl)).json;
  assert.deepEqual(core.components.schemas['io.k8s.api.core.v1.Event']['x-kubernetes-group-version-kind'], [
    { group: '', version: 'v1', kind: 'Event' },
  ]);
  assert.deepEqual(Object.keys(core.paths).sort(), [
    '/api/v1/events',
    '/api/v1/namespaces/{namespace}/events',
    '/api/v1/namespaces/{namespace}/events/{name}',
  ]);
  const text = JSON.stringify(doc.json);
  assert.doesNotMatch(text, /"(tsType|x-message|\$schema|\$id|const|propertyNames)"/);
  assert.doesNotMatch(text, /meta\.schema\.json|#\/definitions\//);
});

test('OpenAPI v2: JSON with definitions and GVKs; a protobuf-only Accept is 406', async () => {
  const v2 = await srv.request('GET', '/openapi/v2', undefined, { accept: 'application/json' });
  assert.equal(v2.status, 200, v2.text);
  assert.equal(v2.json.swagger, '2.0');
  assert.deepEqual(v2.json.definitions['dev.meshctl.v1alpha1.Mesh']['x-kubernetes-group-version-kind'], [
    { group: 'meshctl.dev', version: 'v1alpha1', kind: 'Mesh' },
  ]);
  assert.doesNotMatch(JSON.stringify(v2.json), /"oneOf"|#\/components\//);
  const pb = await srv.request('GET', '/openapi/v2', undefined, {
    accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
  });
  assert.equal(pb.status, 406, pb.text);
  assert.equal(pb.json.reason, 'NotAcceptable');
  assert.equal((await srv.request('GET', '/openapi/v3', undefined, { authorization: null })).status, 401);
});

const event = (name: string, node: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Event',
  metadata: { name },
  involvedObject: { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', name: node, ...extra },
  type: 'Warning',
  reason: 'Unreachable',
  message: `${node} went quiet`,
  source: { component: 'reachability-controller' },
  count: 1,
});

test("core/v1 events: only events under /api/v1, listed as core Events with kubectl describe's field selector", async () => {
  assert.deepEqual((await srv.request('GET', '/api')).json.versions, ['v1']);
  const core = (await srv.request('GET', '/api/v1')).json;
  assert.deepEqual(
    core.resources.map((r: { name: string; namespaced: boolean; verbs: string[] }) => [r.name, r.namespaced, r.verbs]),
    [['events', true, ['get', 'list', 'watch']]],
  );
  for (const e of [event('ev-a', 'n-a'), event('ev-b', 'n-b'), event('ev-c', 'n-a', { uid: 'other-uid' })]) {
    assert.equal((await srv.request('POST', `${API}/events`, e)).status, 201);
  }
  const sel = encodeURIComponent(
    'involvedObject.name=n-a,involvedObject.namespace=,involvedObject.kind=Node,involvedObject.uid=the-uid',
  );
  const list = await srv.request('GET', `/api/v1/events?fieldSelector=${sel}&limit=500`);
  assert.equal(list.status, 200, list.text);
  assert.equal(list.json.kind, 'EventList');
  assert.equal(list.json.apiVersion, 'v1');
  assert.deepEqual(
    list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name),
    ['ev-a'],
    'an event without a uid matches by name; one naming another uid does not',
  );
  const item = list.json.items[0];
  assert.equal(item.apiVersion, 'v1');
  assert.equal(item.metadata.namespace, 'default');
  assert.equal(item.reportingComponent, 'reachability-controller');
  const ns = await srv.request('GET', '/api/v1/namespaces/default/events');
  assert.equal(ns.json.items.length, 3);
  assert.equal((await srv.request('GET', '/api/v1/namespaces/kube-system/events')).json.items.length, 0);
  assert.equal((await srv.request('GET', '/api/v1/namespaces/default/events/ev-b')).json.involvedObject.name, 'n-b');
  assert.equal((await srv.request('GET', '/api/v1/nodes')).status, 404);
  assert.equal((await srv.request('POST', '/api/v1/namespaces/default/events', event('x', 'y'))).status, 405);
});

test('core/v1 events: a watch sends core Events that match its field selector, as they are created', async (t) => {
  const sel = encodeURIComponent('involvedObject.name=w-a');
  const stream = await openStream(srv.config, `/api/v1/watch/namespaces/default/events?fieldSelector=${sel}`);
  t.after(() => stream.close());
  assert.equal(stream.status, 200);
  assert.equal((await srv.request('POST', `${API}/events`, event('ev-w1', 'w-b'))).status, 201);
  assert.equal((await srv.request('POST', `${API}/events`, event('ev-w2', 'w-a'))).status, 201);
  const e = await stream.next(30_000);
  assert.equal(e.type, 'ADDED');
  assert.equal(e.object.apiVersion, 'v1');
  assert.equal(e.object.metadata.name, 'ev-w2', 'the event about w-b was left out');
  assert.equal(e.object.metadata.namespace, 'default');
});
