// kubectl (v1.32) writes against the real server over HTTPS with no extra flags (never --validate=false unless
// that is what is tested): apply -f FILE and DIR, apply --server-side and a conflict between two managers,
// diff, create, replace, delete, patch --type=merge|json, edit, label, annotate, and --validate=strict|warn|false
// with an unknown field — checking what a user sees.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from '../harness.ts';
import { hasKubectl, runKubectl } from './kubectl-helpers.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const skip = !hasKubectl && 'kubectl is not installed';

let srv: TestServer;
let work: string;
const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(srv, work, args);
const site = async (name: string): Promise<unknown> =>
  (await srv.request('GET', `${API}/nodes/${name}`)).json.spec?.site;

function manifest(name: string, s: string, extra = ''): string {
  return `apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  name: ${name}\nspec:\n  site: ${s}\n${extra}`;
}

function file(name: string, text: string): string {
  const p = join(work, name);
  writeFileSync(p, text);
  return p;
}

before(async () => {
  if (!hasKubectl) return;
  work = mkdtempSync(join(tmpdir(), 'meshctl-kubectl-w-'));
  srv = await startServer();
});
after(async () => {
  if (!hasKubectl) return;
  await srv.stop();
  rmSync(work, { recursive: true, force: true });
});

test('kubectl apply -f FILE and -f DIR: created, unchanged, configured', { skip }, async () => {
  const f = file('one.yaml', `${manifest('kw-a', 'home')}---\n${manifest('kw-b', 'office')}`);
  const created = await kubectl('apply', '-f', f);
  assert.equal(created.stdout, 'node.meshctl.dev/kw-a created\nnode.meshctl.dev/kw-b created\n', created.stderr);
  const same = await kubectl('apply', '-f', f);
  assert.equal(same.stdout, 'node.meshctl.dev/kw-a unchanged\nnode.meshctl.dev/kw-b unchanged\n', same.stderr);
  file('one.yaml', `${manifest('kw-a', 'home')}---\n${manifest('kw-b', 'lab')}`);
  const changed = await kubectl('apply', '-f', f);
  assert.equal(changed.stdout, 'node.meshctl.dev/kw-a unchanged\nnode.meshctl.dev/kw-b configured\n', changed.stderr);
  assert.equal(await site('kw-b'), 'lab');

  const dir = join(work, 'dir');
  mkdirSync(dir);
  writeFileSync(join(dir, 'c.yaml'), manifest('kw-c', 'home'));
  writeFileSync(join(dir, 'd.yaml'), manifest('kw-d', 'home'));
  assert.equal(
    (await kubectl('apply', '-f', dir)).stdout,
    'node.meshctl.dev/kw-c created\nnode.meshctl.dev/kw-d created\n',
  );
  writeFileSync(join(dir, 'd.yaml'), manifest('kw-d', 'lab'));
  const dirAgain = await kubectl('apply', '-f', dir);
  assert.equal(dirAgain.stdout, 'node.meshctl.dev/kw-c unchanged\nnode.meshctl.dev/kw-d configured\n', dirAgain.stderr);
});

test('--validate=strict (the default), warn and false with an unknown field', { skip }, async () => {
  const f = file('typo.yaml', manifest('kw-v', 'home', '  zone: eu\n'));
  const strict = await kubectl('apply', '-f', f);
  assert.equal(strict.code, 1);
  assert.match(
    strict.stderr,
    /Error from server \(BadRequest\): error when creating ".*typo\.yaml": Node in version "v1alpha1" cannot be handled as a Node: strict decoding error: unknown field "spec\.zone"/,
  );
  assert.equal((await srv.request('GET', `${API}/nodes/kw-v`)).status, 404);
  const explicit = await kubectl('create', '--validate=strict', '-f', f);
  assert.match(explicit.stderr, /strict decoding error: unknown field "spec\.zone"/);
  const warn = await kubectl('apply', '--validate=warn', '-f', f);
  assert.equal(warn.code, 0, warn.stderr);
  assert.equal(warn.stdout, 'node.meshctl.dev/kw-v created\n');
  assert.match(warn.stderr, /^Warning: unknown field "spec\.zone"$/m);
  const off = await kubectl('replace', '--validate=false', '-f', f);
  assert.equal(off.code, 0, off.stderr);
  assert.equal(off.stderr, '');
  assert.deepEqual((await srv.request('GET', `${API}/nodes/kw-v`)).json.spec, { site: 'home' });
});

test('kubectl apply --server-side, and a conflict between two field managers', { skip }, async () => {
  const f = file('ssa.yaml', manifest('kw-s', 'home'));
  const first = await kubectl('apply', '--server-side', '-f', f);
  assert.equal(first.stdout, 'node.meshctl.dev/kw-s serverside-applied\n', first.stderr);
  const obj = (await srv.request('GET', `${API}/nodes/kw-s`)).json;
  assert.equal(obj.metadata.managedFields[0].manager, 'kubectl');
  const other = file('ssa2.yaml', manifest('kw-s', 'lab'));
  const conflict = await kubectl('apply', '--server-side', '--field-manager=ops', '-f', other);
  assert.equal(conflict.code, 1);
  assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.spec\.site/);
  assert.match(conflict.stderr, /--force-conflicts/);
  assert.equal(await site('kw-s'), 'home');
  const forced = await kubectl('apply', '--server-side', '--field-manager=ops', '--force-conflicts', '-f', other);
  assert.equal(forced.stdout, 'node.meshctl.dev/kw-s serverside-applied\n', forced.stderr);
  assert.equal(await site('kw-s'), 'lab');
  const shown = await kubectl('get', 'node', 'kw-s', '-o', 'yaml', '--show-managed-fields');
  assert.match(shown.stdout, /manager: ops\n\s+operation: Apply/);
});

test('kubectl diff, create, replace, delete', { skip }, async () => {
  const f = file('cr.yaml', manifest('kw-c2', 'home'));
  const created = await kubectl('create', '-f', f);
  assert.equal(created.stdout, 'node.meshctl.dev/kw-c2 created\n', created.stderr);
  const again = await kubectl('create', '-f', f);
  assert.match(again.stderr, /Error from server \(AlreadyExists\).*"kw-c2" already exists/);
  assert.equal((await kubectl('diff', '-f', f)).code, 0, 'no difference');
  file('cr.yaml', manifest('kw-c2', 'lab'));
  const diff = await kubectl('diff', '-f', f);
  assert.equal(diff.code, 1, diff.stderr);
  assert.match(diff.stdout, /^-  site: home$/m);
  assert.match(diff.stdout, /^\+  site: lab$/m);
  assert.equal(await site('kw-c2'), 'home', 'diff changes nothing');
  const replaced = await kubectl('replace', '-f', f);
  assert.equal(replaced.stdout, 'node.meshctl.dev/kw-c2 replaced\n', replaced.stderr);
  assert.equal(await site('kw-c2'), 'lab');
  const del = await kubectl('delete', '-f', f);
  assert.equal(del.stdout, 'node.meshctl.dev "kw-c2" deleted\n', del.stderr);
  const gone = await kubectl('get', 'node', 'kw-c2');
  assert.match(gone.stderr, /Error from server \(NotFound\): nodes\.meshctl\.dev "kw-c2" not found/);
});

test('kubectl patch --type=merge|json, label, annotate, edit', { skip }, async () => {
  await kubectl('apply', '-f', file('p.yaml', manifest('kw-p', 'home')));
  const merge = await kubectl('patch', 'node', 'kw-p', '--type=merge', '-p', '{"spec":{"site":"lab"}}');
  assert.equal(merge.stdout, 'node.meshctl.dev/kw-p patched\n', merge.stderr);
  const json = await kubectl(
    'patch',
    'node',
    'kw-p',
    '--type=json',
    '-p',
    '[{"op":"test","path":"/spec/site","value":"lab"},{"op":"replace","path":"/spec/site","value":"json"}]',
  );
  assert.equal(json.stdout, 'node.meshctl.dev/kw-p patched\n', json.stderr);
  assert.equal(await site('kw-p'), 'json');
  const failed = await kubectl(
    'patch',
    'node',
    'kw-p',
    '--type=json',
    '-p',
    '[{"op":"test","path":"/spec/site","value":"lab"}]',
  );
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /the test of \/spec\/site failed/);
  const strategic = await kubectl('patch', 'node', 'kw-p', '-p', '{"spec":{"site":"x"}}');
  assert.match(strategic.stderr, /application\/strategic-merge-patch\+json.*is not supported/);
  assert.equal((await kubectl('label', 'node', 'kw-p', 'tier=edge')).stdout, 'node.meshctl.dev/kw-p labeled\n');
  assert.equal((await kubectl('annotate', 'node', 'kw-p', 'note=hi')).stdout, 'node.meshctl.dev/kw-p annotated\n');
  const meta = (await srv.request('GET', `${API}/nodes/kw-p`)).json.metadata;
  assert.equal(meta.labels.tier, 'edge');
  assert.equal(meta.annotations.note, 'hi');

  const editor = join(work, 'editor.sh');
  writeFileSync(editor, '#!/bin/sh\nsed -i "s/site: json/site: edited/" "$1"\n');
  chmodSync(editor, 0o755);
  const edit = await runKubectl(srv, work, ['edit', 'node', 'kw-p'], { EDITOR: editor, KUBE_EDITOR: editor });
  assert.equal(edit.stdout, 'node.meshctl.dev/kw-p edited\n', edit.stderr);
  assert.equal(await site('kw-p'), 'edited');
  const typo = join(work, 'typo-editor.sh');
  writeFileSync(typo, '#!/bin/sh\nsed -i "s/site: edited/site: x\\n  zone: eu/" "$1"\n');
  chmodSync(typo, 0o755);
  // kubectl keeps a refused edit in a file in TMPDIR: the test's own directory, not /tmp.
  const bad = await runKubectl(srv, work, ['edit', 'node', 'kw-p'], { EDITOR: typo, KUBE_EDITOR: typo, TMPDIR: work });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /strict decoding error: unknown field "spec\.zone"/);
  assert.ok(
    readdirSync(work).some((f) => f.startsWith('kubectl-edit-')),
    bad.stderr,
  );
  assert.equal(await site('kw-p'), 'edited');
});
