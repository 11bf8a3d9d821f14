// meshctl apply -f DIR --prune --applyset against the real server: the applyset record, prune of what the
// directory no longer contains, the refusal of an empty or unreadable directory, the prune-disabled annotation,
// members of another set, --dry-run=server and diff --prune showing what would be created, changed and deleted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isReason } from '../../api/meta/api-error.ts';
import { cliSuite } from './cli-harness.ts';

const s = cliSuite('meshctl-cli-prune-');
const { meshctl } = s;
const root = s.dir;

/** A directory of its own for one test. */
function dir(name: string): string {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  return d;
}

function node(name: string, site = 'home', annotations = ''): string {
  const ann = annotations ? `  annotations:\n    ${annotations}\n` : '';
  return `apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  name: ${name}\n${ann}spec:\n  site: ${site}\n`;
}

function moduleDoc(name: string): string {
  return `apiVersion: meshctl.dev/v1alpha1\nkind: Module\nmetadata:\n  name: ${name}\nspec:\n  version: 1.0.0\n  resources: []\n`;
}

async function exists(plural: string, name: string): Promise<boolean> {
  try {
    await s.client.get(plural, name);
    return true;
  } catch (e) {
    if (isReason(e, 'NotFound')) return false;
    throw e;
  }
}

test('prune deletes what the directory no longer contains, and only members of its set', async () => {
  const d = dir('site');
  writeFileSync(join(d, 'a.yaml'), node('pr-a'));
  mkdirSync(join(d, 'sub'));
  writeFileSync(join(d, 'sub', 'b.yaml'), node('pr-b') + '---\n' + moduleDoc('pr-mod'));
  await s.client.create('nodes', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'pr-outsider' },
    spec: { site: 'home' },
  });
  const first = await meshctl('apply', '-f', d, '-R', '--prune', '--applyset', 'site');
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, 'node/pr-a created\nnode/pr-b created\nmodule/pr-mod created\n');
  const parent = await s.client.get('applysets', 'site');
  assert.deepEqual(parent.spec?.kinds, ['Node', 'Module']);
  const id = parent.metadata.labels?.['applyset.meshctl.dev/id'];
  assert.match(id ?? '', /^applyset-[A-Za-z0-9_-]{43}-v1$/);
  assert.equal((await s.client.get('nodes', 'pr-a')).metadata.labels?.['applyset.meshctl.dev/part-of'], id);
  assert.match(parent.metadata.annotations?.['applyset.meshctl.dev/tooling'] ?? '', /^meshctl\/v\d+\.\d+\.\d+/);

  rmSync(join(d, 'sub'), { recursive: true });
  const second = await meshctl('apply', '-f', d, '-R', '--prune', '--applyset', 'site');
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stdout, 'node/pr-a unchanged\nmodule/pr-mod pruned\nnode/pr-b pruned\n');
  assert.equal(await exists('nodes', 'pr-b'), false);
  assert.equal(await exists('modules', 'pr-mod'), false);
  assert.equal(await exists('nodes', 'pr-outsider'), true, 'an object that is no member is never pruned');
  assert.deepEqual((await s.client.get('applysets', 'site')).spec?.kinds, ['Node'], 'the kinds narrowed after prune');
});

test('an empty directory prunes nothing without --allow-empty; an unreadable one prunes nothing', async () => {
  const d = dir('empty-me');
  writeFileSync(join(d, 'a.yaml'), node('em-a'));
  assert.equal((await meshctl('apply', '-f', d, '--prune', '--applyset', 'empty-me')).code, 0);
  unlinkSync(join(d, 'a.yaml'));
  const refused = await meshctl('apply', '-f', d, '--prune', '--applyset', 'empty-me');
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /not pruning applyset\/empty-me: the manifests hold no objects, so all 1 of its members/,
  );
  assert.match(refused.stderr, /--allow-empty/);
  assert.equal(await exists('nodes', 'em-a'), true);

  const missing = await meshctl('apply', '-f', join(root, 'no-such-dir'), '--prune', '--applyset', 'empty-me');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /does not exist/);
  assert.equal(await exists('nodes', 'em-a'), true);

  symlinkSync(join(root, 'nowhere'), join(d, 'dangling.yaml'));
  const unreadable = await meshctl('apply', '-f', d, '--prune', '--applyset', 'empty-me', '--allow-empty');
  assert.equal(unreadable.code, 1);
  assert.match(unreadable.stderr, /cannot read ".*dangling\.yaml": ENOENT/);
  assert.equal(await exists('nodes', 'em-a'), true);
  unlinkSync(join(d, 'dangling.yaml'));

  writeFileSync(join(d, 'broken.yaml'), 'kind: Node\nmetadata: [unclosed\n');
  const broken = await meshctl('apply', '-f', d, '--prune', '--applyset', 'empty-me', '--allow-empty');
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /not pruning applyset\/empty-me: 1 manifest problem/);
  assert.equal(await exists('nodes', 'em-a'), true);

  unlinkSync(join(d, 'broken.yaml'));
  const allowed = await meshctl('apply', '-f', d, '--prune', '--applyset', 'empty-me', '--allow-empty');
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.equal(allowed.stdout, 'node/em-a pruned\n');
  assert.equal(await exists('nodes', 'em-a'), false);
});

test('an object annotated meshctl.dev/prune: disabled is kept; a member of another set is not taken over', async () => {
  const d = dir('keep');
  writeFileSync(join(d, 'a.yaml'), node('kp-a', 'home', 'meshctl.dev/prune: disabled'));
  writeFileSync(join(d, 'b.yaml'), node('kp-b'));
  assert.equal((await meshctl('apply', '-f', d, '--prune', '--applyset', 'keep')).code, 0);
  unlinkSync(join(d, 'a.yaml'));
  const run = await meshctl('apply', '-f', d, '--prune', '--applyset', 'keep');
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, 'node/kp-b unchanged\nnode/kp-a kept (annotated meshctl.dev/prune: disabled)\n');
  assert.equal(await exists('nodes', 'kp-a'), true);
  // Kept members stay members: once the annotation is gone, the next prune deletes it even if its kind left.
  const kModule = `apiVersion: meshctl.dev/v1alpha1\nkind: Module\nmetadata:\n  name: kp-m\n  annotations:\n    meshctl.dev/prune: disabled\nspec:\n  version: 1.0.0\n  resources: []\n`;
  writeFileSync(join(d, 'm.yaml'), kModule);
  assert.equal((await meshctl('apply', '-f', d, '--prune', '--applyset', 'keep')).code, 0);
  unlinkSync(join(d, 'm.yaml'));
  assert.equal((await meshctl('apply', '-f', d, '--prune', '--applyset', 'keep')).code, 0);
  assert.deepEqual((await s.client.get('applysets', 'keep')).spec?.kinds, ['Node', 'Module']);
  await s.client.patch('modules', 'kp-m', { metadata: { annotations: { 'meshctl.dev/prune': null } } });
  const pruned = await meshctl('apply', '-f', d, '--prune', '--applyset', 'keep');
  assert.match(pruned.stdout, /^module\/kp-m pruned$/m);
  assert.equal(await exists('modules', 'kp-m'), false);

  const other = dir('other');
  writeFileSync(join(other, 'b.yaml'), node('kp-b', 'office'));
  const taken = await meshctl('apply', '-f', other, '--prune', '--applyset', 'other');
  assert.equal(taken.code, 1);
  assert.match(taken.stderr, /node\/kp-b is a member of another applyset/);
  assert.equal(((await s.client.get('nodes', 'kp-b')).spec as { site: string }).site, 'home');
});

test('--dry-run=server and diff --prune show what would be created, changed and deleted, and change nothing', async () => {
  const d = dir('preview');
  writeFileSync(join(d, 'a.yaml'), node('pv-a'));
  writeFileSync(join(d, 'b.yaml'), node('pv-b'));
  assert.equal((await meshctl('apply', '-f', d, '--prune', '--applyset', 'preview')).code, 0);
  writeFileSync(join(d, 'a.yaml'), node('pv-a', 'office'));
  unlinkSync(join(d, 'b.yaml'));
  writeFileSync(join(d, 'c.yaml'), node('pv-c'));
  const dry = await meshctl('apply', '-f', d, '--prune', '--applyset', 'preview', '--dry-run=server');
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(
    dry.stdout,
    'node/pv-a configured (server dry run)\nnode/pv-c created (server dry run)\nnode/pv-b pruned (server dry run)\n',
  );
  assert.equal(await exists('nodes', 'pv-b'), true);
  assert.equal(await exists('nodes', 'pv-c'), false);

  const diff = await meshctl('diff', '-f', d, '--prune', '--applyset', 'preview');
  assert.equal(diff.code, 1, diff.stderr);
  assert.match(
    diff.stdout,
    /diff -u -N live\/nodes.meshctl.dev\/pv-a merged\/nodes.meshctl.dev\/pv-a\n[^]*-  site: home\n\+  site: office\n/,
  );
  assert.match(
    diff.stdout,
    /diff -u -N live\/nodes.meshctl.dev\/pv-c merged\/nodes.meshctl.dev\/pv-c\n[^]*\+  name: pv-c\n/,
  );
  assert.match(
    diff.stdout,
    /diff -u -N live\/nodes.meshctl.dev\/pv-b merged\/nodes.meshctl.dev\/pv-b\n[^]*-  name: pv-b\n/,
  );
  assert.equal(((await s.client.get('nodes', 'pv-a')).spec as { site: string }).site, 'home');
});

test('a parent managed by another tool is refused, and nothing is applied or pruned', async () => {
  await s.client.create('applysets', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'ApplySet',
    metadata: { name: 'foreign', annotations: { 'applyset.meshctl.dev/tooling': 'kubectl/v1.32.0' } },
    spec: { kinds: ['Node'] },
  });
  const d = dir('foreign');
  writeFileSync(join(d, 'a.yaml'), node('fg-a'));
  const r = await meshctl('apply', '-f', d, '--prune', '--applyset', 'foreign');
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    'error: applyset/foreign is managed by kubectl/v1.32.0 (applyset.meshctl.dev/tooling), not meshctl\n',
  );
  assert.equal(await exists('nodes', 'fg-a'), false);
});

test('--prune needs --applyset', async () => {
  const r = await meshctl('apply', '-f', dir('x'), '--prune');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--prune needs --applyset NAME/);
});
