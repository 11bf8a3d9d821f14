/**
 * The samples in manifests/samples/ are what a new user applies first, often to a mesh that already holds
 * their own objects: each must be valid as is, named so that it cannot replace a user's object, and the
 * validation of broken variants must name the right fields. The Mesh singleton is not a sample (it cannot be
 * deleted, and every mesh has one): manifests/mesh.yaml shows it with its defaults.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../meta/types.ts';
import { KINDS } from './kinds.ts';
import { validateObject } from './validate.ts';

const SAMPLES = fileURLToPath(new URL('../../manifests/samples/', import.meta.url));
const MESH_FILE = fileURLToPath(new URL('../../manifests/mesh.yaml', import.meta.url));

/** Every document of a file. */
function loadFile(path: string, file: string): { file: string; obj: KubeObject }[] {
  const out: { file: string; obj: KubeObject }[] = [];
  for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
    assert.deepEqual(doc.errors, [], `${file} parses`);
    const obj = doc.toJS() as KubeObject | null;
    if (obj !== null) out.push({ file, obj });
  }
  return out;
}

/** Every document of every sample file, with the file it came from. */
function loadSamples(): { file: string; obj: KubeObject }[] {
  return readdirSync(SAMPLES)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .flatMap((file) => loadFile(join(SAMPLES, file), file));
}

const samples = loadSamples();
const mesh = loadFile(MESH_FILE, 'manifests/mesh.yaml');

/** A deep copy of the sample of a kind (the Mesh's from manifests/mesh.yaml). */
function sample(kind: string): KubeObject {
  const found = [...samples, ...mesh].find((s) => s.obj.kind === kind);
  assert.ok(found, `a ${kind} sample exists`);
  return structuredClone(found.obj);
}

describe('manifests/samples', () => {
  it('has one sample file per kind but the Mesh, named after the kind; the Mesh is in manifests/mesh.yaml', () => {
    for (const info of KINDS.filter((k) => k.kind !== 'Mesh')) {
      const inFile = samples.filter((s) => s.file === `${info.singular}.yaml`).map((s) => s.obj.kind);
      assert.deepEqual(inFile, [info.kind], `${info.singular}.yaml holds the ${info.kind}`);
    }
    assert.deepEqual(
      samples.filter((s) => s.obj.kind === 'Mesh'),
      [],
      'no Mesh among the samples: `meshctl delete -f manifests/samples/` must not try to delete the singleton',
    );
    assert.deepEqual(
      mesh.map((s) => [s.obj.kind, s.obj.metadata.name]),
      [['Mesh', 'mesh']],
    );
  });

  it('name every object with the prefix "sample-", so that applying them never replaces a user\'s object', () => {
    for (const { file, obj } of samples) assert.match(obj.metadata.name ?? '', /^sample-/, `${file}: ${obj.kind}`);
  });

  for (const { file, obj } of [...samples, ...mesh]) {
    it(`${file}: ${obj.kind} ${obj.metadata?.name} is valid and ready to apply`, () => {
      assert.deepEqual(validateObject(obj), []);
      assert.equal(obj.status, undefined, 'samples carry no status');
      assert.ok(obj.metadata.name, 'samples are named');
    });
  }

  it('refer to each other consistently', () => {
    const names = (kind: string) => new Set(samples.filter((s) => s.obj.kind === kind).map((s) => s.obj.metadata.name));
    const spec = (kind: string) => sample(kind).spec as Record<string, unknown>;
    assert.ok(names('Module').has(spec('Assignment').module as string));
    assert.ok(names('Node').has(spec('Assignment').node as string));
    assert.ok(names('Node').has(spec('Route').node as string));
    assert.ok(names('Node').has(spec('Certificate').node as string));
    assert.equal(spec('Route').port, spec('Module').port, 'the route points at the module port');
    const owners = (spec('Declaration').resources as { owner: string }[]).map((r) => r.owner);
    assert.ok(owners.every((o) => names('Assignment').has(o)));
  });
});

describe('validation of broken samples', () => {
  it('reports a wrong type at its field', () => {
    const route = sample('Route');
    (route.spec as Record<string, unknown>).port = '8080';
    assert.deepEqual(validateObject(route), [
      { field: 'spec.port', message: 'must be integer', reason: 'FieldValueInvalid' },
    ]);
  });

  it('reports an unknown field as not supported', () => {
    const node = sample('Node');
    (node.spec as Record<string, unknown>).zone = 'eu';
    assert.deepEqual(validateObject(node), [
      { field: 'spec.zone', message: 'unknown field "spec.zone"', reason: 'FieldValueNotSupported' },
    ]);
  });

  it('reports a missing required field by its own path', () => {
    const asg = sample('Assignment');
    delete (asg.spec as Record<string, unknown>).node;
    assert.deepEqual(validateObject(asg), [
      { field: 'spec.node', message: 'Required value', reason: 'FieldValueRequired' },
    ]);
  });

  it('reports a bad name', () => {
    const mod = sample('Module');
    mod.metadata.name = 'Web_Server';
    const causes = validateObject(mod);
    assert.equal(causes.length, 1, JSON.stringify(causes));
    assert.equal(causes[0].field, 'metadata.name');
    assert.equal(causes[0].reason, 'FieldValueInvalid');
    assert.match(causes[0].message, /^Invalid value: "Web_Server": must be a lowercase RFC 1123 subdomain/);
  });

  it('reports a second Mesh name as invalid', () => {
    const mesh = sample('Mesh');
    mesh.metadata.name = 'other';
    assert.deepEqual(validateObject(mesh), [
      {
        field: 'metadata.name',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "other": Mesh is a singleton; its only allowed name is "mesh"',
      },
    ]);
  });

  it('reports a broken host resource deep inside the module by index', () => {
    const mod = sample('Module');
    const resources = (mod.spec as { resources: Record<string, unknown>[] }).resources;
    (resources[1].spec as Record<string, unknown>).mode = 644;
    (resources[2].spec as Record<string, unknown>).command = 'node server.js';
    assert.deepEqual(
      validateObject(mod).map((c) => [c.field, c.reason]),
      [
        ['spec.resources[1].spec.mode', 'FieldValueInvalid'],
        ['spec.resources[2].spec.command', 'FieldValueInvalid'],
      ],
    );
    assert.equal(validateObject(mod)[0].message, 'Invalid value: 644: must be an octal mode string such as "0644"');
  });
});
