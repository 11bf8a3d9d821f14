// manifests/builtin/ shows what `meshctl init` creates: it must say what the code builds, and be valid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../meta/types.ts';
import { controlPlaneModule, overlayHubModule, roleAssignment } from './builtin-modules.ts';
import { validateObject } from './validate.ts';

const BUILTIN = fileURLToPath(new URL('../../manifests/builtin/', import.meta.url));

function load(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(BUILTIN + file, 'utf8')).map((d) => d.toJS() as KubeObject);
}

test('manifests/builtin/control-plane.yaml is what init creates with the defaults', () => {
  const [module, assignment] = load('control-plane.yaml');
  const version = (module.spec as { version: string }).version;
  const built = controlPlaneModule({
    version,
    command: ['mesh-control-plane'],
    dataDir: '/var/lib/meshctl/control-plane',
    listen: '0.0.0.0:6443',
    node: 'cp-1',
  });
  assert.deepEqual(module, built);
  assert.deepEqual(assignment, roleAssignment('control-plane', 'cp-1'));
});

test('manifests/builtin/overlay-hub.yaml is what init creates', () => {
  const [module, assignment] = load('overlay-hub.yaml');
  assert.deepEqual(module, overlayHubModule((module.spec as { version: string }).version));
  assert.deepEqual(assignment, roleAssignment('overlay-hub', 'cp-1'));
});

test('the built-in modules and assignments are valid, with --san and without a port', () => {
  const cp = controlPlaneModule({
    version: '1.2.3',
    command: ['/usr/bin/node', '/opt/x.js'],
    dataDir: '/d',
    listen: '[::1]:7443',
    node: 'n',
    sans: ['a.example', '10.0.0.1'],
  });
  const objs = [...load('control-plane.yaml'), ...load('overlay-hub.yaml'), cp as unknown as KubeObject];
  for (const o of objs) assert.deepEqual(validateObject(o), [], `${o.kind} ${o.metadata.name}`);
  assert.equal(cp.spec.port, 7443);
  const service = cp.spec.resources[0];
  assert.ok(service.kind === 'Service');
  assert.deepEqual(service.spec.command.slice(-6), ['--node', 'n', '--san', 'a.example', '--san', '10.0.0.1']);
});
