// meshctl apply against the real server: created / unchanged / configured, removed fields, dry run,
// invalid documents and unparsable files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../harness.ts';
import { cliSuite } from './cli-harness.ts';

const s = cliSuite('meshctl-cli-apply-');
const { meshctl } = s;
const dir = s.dir;
const samples = join(REPO_ROOT, 'manifests', 'samples');

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const node = (name: string, spec: string, labels = '') =>
  `apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  name: ${name}\n${labels ? `  labels:\n${labels}` : ''}spec:\n${spec}`;

test('apply the samples: created, then unchanged on a second apply', async () => {
  const kinds = readdirSync(samples).filter((f) => f.endsWith('.yaml')).length;
  const first = await meshctl('apply', '-f', samples);
  assert.equal(first.code, 0, first.stderr);
  const lines = first.stdout.trim().split('\n');
  assert.equal(lines.length, kinds);
  assert.ok(
    lines.every((l) => / created$/.test(l)),
    first.stdout,
  );
  assert.ok(lines.includes('node/sample-node created'));
  const again = await meshctl('apply', '-f', samples);
  assert.equal(again.code, 0, again.stderr);
  assert.ok(
    again.stdout
      .trim()
      .split('\n')
      .every((l) => / unchanged$/.test(l)),
    again.stdout,
  );
  assert.equal((await s.client.list('modules')).items.length, 1);
});

test('a changed field is configured; a field removed from the manifest is removed from the object', async () => {
  const file = write(
    'n1.yaml',
    node('n1', '  site: home\n  endpoint: 192.0.2.1:51820\n', '    role: web\n    tier: a\n'),
  );
  assert.equal((await meshctl('apply', '-f', file)).stdout, 'node/n1 created\n');
  write('n1.yaml', node('n1', '  site: office\n  endpoint: 192.0.2.1:51820\n', '    role: web\n    tier: a\n'));
  assert.equal((await meshctl('apply', '-f', file)).stdout, 'node/n1 configured\n');
  assert.equal(((await s.client.get('nodes', 'n1')).spec as { site: string }).site, 'office');
  write('n1.yaml', node('n1', '  site: office\n', '    role: web\n'));
  assert.equal((await meshctl('apply', '-f', file)).stdout, 'node/n1 configured\n');
  const live = await s.client.get('nodes', 'n1');
  assert.deepEqual(live.spec, { site: 'office' });
  assert.deepEqual(live.metadata.labels, { role: 'web' });
  assert.equal((await meshctl('apply', '-f', file)).stdout, 'node/n1 unchanged\n');
});

test('fields set by others are kept; a drifted applied field is put back', async () => {
  const file = write('n2.yaml', node('n2', '  site: home\n'));
  await meshctl('apply', '-f', file);
  await s.client.patch('nodes', 'n2', { metadata: { labels: { added: 'by-hand' } }, spec: { site: 'drifted' } });
  assert.equal((await meshctl('apply', '-f', file)).stdout, 'node/n2 configured\n');
  const live = await s.client.get('nodes', 'n2');
  assert.equal((live.spec as { site: string }).site, 'home');
  assert.deepEqual(live.metadata.labels, { added: 'by-hand' });
});

test('--dry-run=server reports what would happen and writes nothing', async () => {
  const file = write('dry.yaml', node('dry', '  site: home\n'));
  const r = await meshctl('apply', '-f', file, '--dry-run=server');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'node/dry created (server dry run)\n');
  assert.deepEqual((await s.client.list('nodes', { fieldSelector: 'metadata.name=dry' })).items, []);
  const before = (await s.client.get('nodes', 'sample-node')).metadata.resourceVersion;
  write('sample-node.yaml', node('sample-node', '  site: elsewhere\n'));
  assert.equal(
    (await meshctl('apply', '-f', join(dir, 'sample-node.yaml'), '--dry-run=server')).stdout,
    'node/sample-node configured (server dry run)\n',
  );
  assert.equal((await s.client.get('nodes', 'sample-node')).metadata.resourceVersion, before);
});

test('an invalid document reports the server causes; the other documents are still applied; exit 1', async () => {
  const file = write(
    'mixed.yaml',
    [node('good-1', '  site: home\n'), node('bad', '  site: NOT_A_LABEL\n'), node('good-2', '  site: home\n')].join(
      '---\n',
    ),
  );
  const r = await meshctl('apply', '-f', file);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, 'node/good-1 created\nnode/good-2 created\n');
  assert.match(
    r.stderr,
    /^Error from server \(Invalid\): error when applying ".*mixed\.yaml" \(document 2\): .*is invalid:\n {2}\* spec\.site: /m,
  );
  assert.ok(!/\n\s+at /.test(r.stderr), 'no stack trace');
  await s.client.get('nodes', 'good-2');
});

test('a YAML syntax error names the file and line and applies nothing from that file', async () => {
  const broken = write('broken.yaml', `${node('never', '  site: home\n')}---\nkind: Node\nmetadata:\n  name: [oops\n`);
  const fine = write('fine.yaml', node('fine', '  site: home\n'));
  const r = await meshctl('apply', '-f', broken, '-f', fine);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: error parsing .*broken\.yaml: line \d+, column \d+: /m);
  assert.equal(r.stdout, 'node/fine created\n');
  assert.deepEqual((await s.client.list('nodes', { fieldSelector: 'metadata.name=never' })).items, []);
});

test('JSON from stdin, unknown kinds and a missing path', async () => {
  const json = JSON.stringify({
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'from-stdin' },
    spec: { site: 'home' },
  });
  const r = await s.cli.run(['apply', '-f', '-'], { config: s.server.meshconfigPath, stdin: json });
  assert.equal(r.stdout, 'node/from-stdin created\n', r.stderr);
  const unknown = await meshctl(
    'apply',
    '-f',
    write('odd.yaml', 'apiVersion: meshctl.dev/v1alpha1\nkind: Gadget\nmetadata:\n  name: g\n'),
  );
  assert.equal(unknown.code, 1);
  assert.match(
    unknown.stderr,
    /error: error when applying ".*odd\.yaml" \(document 1\): no matches for kind "Gadget" in version "meshctl\.dev\/v1alpha1"/,
  );
  const missing = await meshctl('apply', '-f', join(dir, 'nope'));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^error: the path ".*nope" does not exist$/m);
  const usage = await meshctl('apply');
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /error: must specify one of -f/);
});

const assignment = (name: string, spec: string) =>
  `apiVersion: meshctl.dev/v1alpha1\nkind: Assignment\nmetadata:\n  name: ${name}\nspec:\n  module: web\n${spec}`;

test('an Assignment to a Node that does not exist is applied with a warning on stderr, as kubectl prints one', async () => {
  const ghost = await meshctl('apply', '-f', write('ghost.yaml', assignment('web-on-ghost', '  node: ghost\n')));
  assert.equal(ghost.code, 0, ghost.stderr);
  assert.equal(ghost.stdout, 'assignment/web-on-ghost created\n');
  assert.equal(
    ghost.stderr,
    'Warning: spec.node: node "ghost" does not exist; assignment "web-on-ghost" stays Applied=False (NodeNotFound) until a node of that name joins\n',
  );
  await s.client.create('nodes', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'real' },
    spec: {},
  });
  const real = await meshctl('apply', '-f', write('real.yaml', assignment('web-on-real', '  node: real\n')));
  assert.equal(real.code, 0, real.stderr);
  assert.equal(real.stderr, '', 'no warning when the node exists');
});

test('an unknown field is refused with a "did you mean" for the field it is a typo of', async () => {
  const r = await meshctl('apply', '-f', write('typo.yaml', assignment('web-on-typo', '  nodee: real\n')));
  assert.equal(r.code, 1);
  assert.match(r.stderr, /unknown field "spec\.nodee"; did you mean "spec\.node"\?/);
});
