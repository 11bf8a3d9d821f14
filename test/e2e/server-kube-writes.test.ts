// What Kubernetes clients write besides create/update/merge patch, against the real server: fieldValidation,
// JSON patch, server-side apply with managedFields and conflicts, and a namespace on a cluster-scoped object.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../harness.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const JSON_PATCH = { 'content-type': 'application/json-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

let srv: TestServer;
before(async () => {
  srv = await startServer();
});
after(async () => {
  await srv.stop();
});

function node(name: string, spec: Record<string, unknown> = { site: 'home' }): Record<string, unknown> {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name }, spec };
}

test('fieldValidation: Strict refuses with kube wording, Warn drops with a Warning, Ignore drops, absent is 422', async () => {
  const body = (name: string): Record<string, unknown> => node(name, { site: 'home', foo: 1, bar: { x: 1 } });
  const strict = await srv.request('POST', `${API}/nodes?fieldValidation=Strict`, body('fv-s'));
  assert.equal(strict.status, 400, strict.text);
  assert.equal(strict.json.reason, 'BadRequest');
  assert.equal(
    strict.json.message,
    'Node in version "v1alpha1" cannot be handled as a Node: strict decoding error: unknown field "spec.foo", unknown field "spec.bar"',
  );
  assert.equal((await srv.request('GET', `${API}/nodes/fv-s`)).status, 404);

  const warn = await srv.request('POST', `${API}/nodes?fieldValidation=Warn`, body('fv-w'));
  assert.equal(warn.status, 201, warn.text);
  assert.deepEqual(warn.json.spec, { site: 'home' });
  assert.equal(
    String(warn.headers.warning),
    '299 - "unknown field \\"spec.foo\\"", 299 - "unknown field \\"spec.bar\\""',
  );

  const ignore = await srv.request('POST', `${API}/nodes?fieldValidation=Ignore`, body('fv-i'));
  assert.equal(ignore.status, 201, ignore.text);
  assert.deepEqual(ignore.json.spec, { site: 'home' });
  assert.equal(ignore.headers.warning, undefined);

  const plain = await srv.request('POST', `${API}/nodes`, body('fv-p'));
  assert.equal(plain.status, 422, plain.text);
  const bad = await srv.request('POST', `${API}/nodes?fieldValidation=Loud`, body('fv-x'));
  assert.equal(bad.status, 400);
  assert.match(bad.json.message, /fieldValidation must be one of "Ignore", "Warn" or "Strict"/);

  const merge = await srv.request(
    'PATCH',
    `${API}/nodes/fv-w?fieldValidation=Strict`,
    { spec: { sight: 'x' } },
    {
      'content-type': 'application/merge-patch+json',
    },
  );
  assert.equal(merge.status, 400);
  assert.match(merge.json.message, /strict decoding error: unknown field "spec.sight"/);
});

test('fieldValidation also holds for a JoinToken create (its own create path)', async (t) => {
  const mesh = await startServer({ meshAccess: true });
  t.after(() => mesh.stop());
  const body = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'JoinToken',
    metadata: {},
    spec: { ttl: '1h', colour: 'x' },
  };
  const strict = await mesh.request('POST', `${API}/jointokens?fieldValidation=Strict`, body);
  assert.equal(strict.status, 400, strict.text);
  assert.match(
    strict.json.message,
    /^JoinToken in version "v1alpha1" cannot be handled as a JoinToken: strict decoding error: unknown field "spec\.colour"$/,
  );
  const warn = await mesh.request('POST', `${API}/jointokens?fieldValidation=Warn`, body);
  assert.equal(warn.status, 201, warn.text);
  assert.equal(String(warn.headers.warning), '299 - "unknown field \\"spec.colour\\""');
});

test('a metadata.namespace on a cluster-scoped object is cleared, as kube-apiserver does', async () => {
  const body = node('ns-a');
  (body.metadata as Record<string, unknown>).namespace = 'default';
  const r = await srv.request('POST', `${API}/nodes`, body);
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.metadata.namespace, undefined);
  const put = await srv.request('PUT', `${API}/nodes/ns-a`, {
    ...r.json,
    metadata: { ...r.json.metadata, namespace: 'x' },
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.metadata.namespace, undefined);
});

test('JSON patch: add, replace, remove, move, copy and test; a failed test or missing path is 422 and changes nothing', async () => {
  await srv.request('POST', `${API}/nodes`, node('jp-a'));
  const ok = await srv.request(
    'PATCH',
    `${API}/nodes/jp-a`,
    [
      { op: 'test', path: '/spec/site', value: 'home' },
      { op: 'add', path: '/metadata/labels', value: { 'a/b': 'x' } },
      { op: 'copy', from: '/metadata/labels/a~1b', path: '/metadata/labels/c' },
      { op: 'move', from: '/metadata/labels/c', path: '/metadata/labels/d' },
      { op: 'replace', path: '/spec/site', value: 'lab' },
      { op: 'remove', path: '/metadata/labels/a~1b' },
    ],
    JSON_PATCH,
  );
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.json.spec.site, 'lab');
  assert.deepEqual(ok.json.metadata.labels, { d: 'x' });
  const rv = ok.json.metadata.resourceVersion;

  const failed = await srv.request(
    'PATCH',
    `${API}/nodes/jp-a`,
    [
      { op: 'replace', path: '/spec/site', value: 'x' },
      { op: 'test', path: '/spec/site', value: 'home' },
    ],
    JSON_PATCH,
  );
  assert.equal(failed.status, 422, failed.text);
  assert.match(failed.json.message, /the test of \/spec\/site failed/);
  const missing = await srv.request('PATCH', `${API}/nodes/jp-a`, [{ op: 'remove', path: '/spec/nope' }], JSON_PATCH);
  assert.equal(missing.status, 422, missing.text);
  const malformed = await srv.request('PATCH', `${API}/nodes/jp-a`, [{ op: 'frobnicate', path: '/x' }], JSON_PATCH);
  assert.equal(malformed.status, 400, malformed.text);
  assert.equal((await srv.request('PATCH', `${API}/nodes/jp-a`, { op: 'add' }, JSON_PATCH)).status, 400);
  assert.equal((await srv.request('GET', `${API}/nodes/jp-a`)).json.metadata.resourceVersion, rv);
});

test('a client cannot set managedFields: a create or update of an object not applied server-side stores none', async () => {
  const fake = [
    { manager: 'x', operation: 'Apply', apiVersion: 'meshctl.dev/v1alpha1', fieldsType: 'FieldsV1', fieldsV1: {} },
  ];
  const body = node('mf-a');
  (body.metadata as Record<string, unknown>).managedFields = fake;
  const created = await srv.request('POST', `${API}/nodes`, body);
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.metadata.managedFields, undefined);
  const put = await srv.request('PUT', `${API}/nodes/mf-a`, {
    ...created.json,
    metadata: { ...created.json.metadata, managedFields: fake },
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.metadata.managedFields, undefined);
});

const applied = (name: string, site: string, labels = 'a: b'): string =>
  `apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  name: ${name}\n  labels:\n    ${labels}\nspec:\n  site: ${site}\n`;

test('server-side apply: creates, records managedFields, reports conflicts as kube does, force takes over', async () => {
  const first = await srv.request('PATCH', `${API}/nodes/ssa-a?fieldManager=alice`, applied('ssa-a', 'home'), APPLY);
  assert.equal(first.status, 201, first.text);
  const mf = first.json.metadata.managedFields;
  assert.equal(mf.length, 1);
  assert.equal(mf[0].manager, 'alice');
  assert.equal(mf[0].operation, 'Apply');
  assert.equal(mf[0].fieldsType, 'FieldsV1');
  assert.deepEqual(mf[0].fieldsV1, {
    'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
    'f:spec': { '.': {}, 'f:site': {} },
  });

  const same = await srv.request('PATCH', `${API}/nodes/ssa-a?fieldManager=bob`, applied('ssa-a', 'home'), APPLY);
  assert.equal(same.status, 200, same.text);
  assert.deepEqual(
    same.json.metadata.managedFields.map((e: { manager: string }) => e.manager),
    ['alice', 'bob'],
    'the same value is owned by both',
  );

  const conflict = await srv.request('PATCH', `${API}/nodes/ssa-a?fieldManager=carol`, applied('ssa-a', 'lab'), APPLY);
  assert.equal(conflict.status, 409, conflict.text);
  assert.equal(conflict.json.reason, 'Conflict');
  assert.equal(
    conflict.json.message,
    'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.site\nconflicts with "bob":\n- .spec.site',
  );
  assert.deepEqual(conflict.json.details.causes, [
    { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.site' },
    { reason: 'FieldManagerConflict', message: 'conflict with "bob"', field: '.spec.site' },
  ]);

  const forced = await srv.request(
    'PATCH',
    `${API}/nodes/ssa-a?fieldManager=carol&force=true`,
    applied('ssa-a', 'lab'),
    APPLY,
  );
  assert.equal(forced.status, 200, forced.text);
  assert.equal(forced.json.spec.site, 'lab');
  const owners = Object.fromEntries(
    forced.json.metadata.managedFields.map((e: { manager: string; fieldsV1: object }) => [e.manager, e.fieldsV1]),
  );
  assert.deepEqual(owners.alice, { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } });
  assert.deepEqual(owners.carol['f:spec'], { '.': {}, 'f:site': {} });
});

test('server-side apply: a field no longer applied is removed unless someone else owns it; an update takes ownership', async () => {
  await srv.request('PATCH', `${API}/nodes/ssa-b?fieldManager=alice`, applied('ssa-b', 'home', 'x: y'), APPLY);
  const dropped = await srv.request(
    'PATCH',
    `${API}/nodes/ssa-b?fieldManager=alice`,
    'apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  name: ssa-b\nspec:\n  site: home\n',
    APPLY,
  );
  assert.equal(dropped.status, 200, dropped.text);
  assert.equal(dropped.json.metadata.labels, undefined, 'the label alice stopped applying is gone');

  const upd = await srv.request(
    'PATCH',
    `${API}/nodes/ssa-b?fieldManager=editor`,
    { spec: { site: 'edited' } },
    {
      'content-type': 'application/merge-patch+json',
    },
  );
  assert.equal(upd.status, 200, upd.text);
  const editor = upd.json.metadata.managedFields.find((e: { manager: string }) => e.manager === 'editor');
  assert.equal(editor.operation, 'Update');
  assert.deepEqual(editor.fieldsV1, { 'f:spec': { '.': {}, 'f:site': {} } });
  const back = await srv.request('PATCH', `${API}/nodes/ssa-b?fieldManager=alice`, applied('ssa-b', 'home'), APPLY);
  assert.equal(back.status, 409, back.text);
  assert.match(
    back.json.message,
    /^Apply failed with 1 conflict: conflict with "editor" using meshctl\.dev\/v1alpha1 at \S+: \.spec\.site$/,
  );
});

test('server-side apply: an object without managedFields is owned by before-first-apply; bad requests', async () => {
  await srv.request('POST', `${API}/nodes`, node('ssa-c'));
  const c = await srv.request('PATCH', `${API}/nodes/ssa-c?fieldManager=alice`, applied('ssa-c', 'lab'), APPLY);
  assert.equal(c.status, 409, c.text);
  assert.match(c.json.message, /conflict with "before-first-apply" using meshctl\.dev\/v1alpha1/);
  const same = await srv.request('PATCH', `${API}/nodes/ssa-c?fieldManager=alice`, applied('ssa-c', 'home'), APPLY);
  assert.equal(same.status, 200, same.text);

  const noManager = await srv.request('PATCH', `${API}/nodes/ssa-c`, applied('ssa-c', 'home'), APPLY);
  assert.equal(noManager.status, 400);
  assert.equal(noManager.json.message, 'fieldManager is required for apply requests');
  const strict = await srv.request(
    'PATCH',
    `${API}/nodes/ssa-c?fieldManager=alice&fieldValidation=Strict`,
    applied('ssa-c', 'home').replace('site: home', 'site: home\n  zone: z'),
    APPLY,
  );
  assert.equal(strict.status, 400, strict.text);
  assert.match(strict.json.message, /strict decoding error: unknown field "spec.zone"/);
  const dry = await srv.request('PATCH', `${API}/nodes/ssa-d?fieldManager=a&dryRun=All`, applied('ssa-d', 'x'), APPLY);
  assert.equal(dry.status, 201, dry.text);
  assert.equal((await srv.request('GET', `${API}/nodes/ssa-d`)).status, 404);
});
