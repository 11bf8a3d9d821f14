import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expandPaths, loadManifests, parseManifestText } from './manifests.ts';

const dir = mkdtempSync(join(tmpdir(), 'meshctl-manifests-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const node = (name: string) =>
  `apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  name: ${name}\nspec:\n  site: home\n`;

test('multi-document YAML: every object in order, empty documents skipped', async () => {
  const r = await parseManifestText(`${node('a')}---\n---\n# only a comment\n---\n${node('b')}`, 'x.yaml');
  assert.deepEqual(r.problems, []);
  assert.deepEqual(
    r.docs.map((d) => [d.object.metadata.name, d.index]),
    [
      ['a', 1],
      ['b', 4],
    ],
  );
});

test('JSON objects, arrays and Lists', async () => {
  const obj = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'j' } };
  assert.equal((await parseManifestText(JSON.stringify(obj), 'a.json', true)).docs.length, 1);
  assert.equal((await parseManifestText(JSON.stringify([obj, obj]), 'a.json', true)).docs.length, 2);
  const list = { apiVersion: 'v1', kind: 'List', items: [obj, obj, obj] };
  assert.equal((await parseManifestText(JSON.stringify(list), 'a.json', true)).docs.length, 3);
  assert.equal(
    (await parseManifestText(`kind: List\napiVersion: v1\nitems:\n- ${JSON.stringify(obj)}\n`, 'l.yaml')).docs.length,
    1,
  );
});

test('a YAML syntax error names the file and line and yields no objects from that file', async () => {
  const r = await parseManifestText(
    `${node('a')}---\nkind: Node\nmetadata:\n  name: [unclosed\nspec: {}\n`,
    'bad.yaml',
  );
  assert.equal(r.docs.length, 0);
  assert.equal(r.problems.length, 1);
  assert.match(r.problems[0].message, /^error parsing bad\.yaml: line \d+, column \d+: /);
});

test('a JSON syntax error names the line', async () => {
  const r = await parseManifestText('{\n  "kind": "Node",\n  "metadata": }\n', 'bad.json', true);
  assert.equal(r.docs.length, 0);
  assert.match(r.problems[0].message, /^error parsing bad\.json: line 3, column \d+: /);
});

test('a document without kind or name is a problem of that document only', async () => {
  const r = await parseManifestText(`metadata:\n  name: x\n---\n${node('ok')}---\n42\n`, 'x.yaml');
  assert.deepEqual(
    r.docs.map((d) => d.object.metadata.name),
    ['ok'],
  );
  assert.deepEqual(
    r.problems.map((p) => p.index),
    [1, 3],
  );
  assert.match(r.problems[0].message, /apiVersion not set, kind not set/);
});

test('directories: yaml/yml/json in file-name order, subdirectories only with -R; missing paths fail', async () => {
  mkdirSync(join(dir, 'd', 'sub'), { recursive: true });
  writeFileSync(join(dir, 'd', 'b.yaml'), node('b'));
  writeFileSync(join(dir, 'd', 'a.yml'), node('a'));
  writeFileSync(
    join(dir, 'd', 'c.json'),
    JSON.stringify({ apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'c' } }),
  );
  writeFileSync(join(dir, 'd', 'notes.txt'), 'not a manifest');
  writeFileSync(join(dir, 'd', 'sub', 'z.yaml'), node('z'));
  assert.deepEqual(
    expandPaths([join(dir, 'd')], false).map((p) => p.slice(dir.length + 1)),
    ['d/a.yml', 'd/b.yaml', 'd/c.json'],
  );
  const loaded = await loadManifests([join(dir, 'd')], { recursive: true });
  assert.deepEqual(
    loaded.docs.map((d) => d.object.metadata.name),
    ['a', 'b', 'c', 'z'],
  );
  assert.throws(() => expandPaths([join(dir, 'nope')], false), /the path ".*nope" does not exist/);
});

test('- reads stdin', async () => {
  const loaded = await loadManifests(['-'], { stdin: () => node('from-stdin') });
  assert.equal(loaded.docs[0].source, 'STDIN');
  assert.equal(loaded.docs[0].object.metadata.name, 'from-stdin');
});
