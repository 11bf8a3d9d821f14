import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ApiError } from '../meta/api-error.ts';
import { kindByKind } from './kinds.ts';
import { compileAllSchemas, validateName, validateObject, validateStatusWrite } from './validate.ts';

const API = 'meshctl.dev/v1alpha1';
const SCHEMAS = fileURLToPath(new URL('./schemas/', import.meta.url));

function fields(obj: unknown): [string | undefined, string | undefined][] {
  return validateObject(obj).map((c) => [c.field, c.reason]);
}

function route(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = { name: 'web' }) {
  return {
    apiVersion: API,
    kind: 'Route',
    metadata,
    spec: { host: 'web.example.com', node: 'node-a', port: 8080, ...spec },
  };
}

function moduleWith(resources: unknown[]) {
  return { apiVersion: API, kind: 'Module', metadata: { name: 'web' }, spec: { version: '1.0.0', resources } };
}

describe('validateObject: type meta', () => {
  it('rejects what is not an object', () => {
    assert.deepEqual(validateObject([1]), [{ message: 'must be an object', reason: 'FieldValueInvalid' }]);
    assert.deepEqual(validateObject(null), [{ message: 'must be an object', reason: 'FieldValueInvalid' }]);
  });

  it('requires apiVersion and kind, and knows only meshctl kinds', () => {
    assert.deepEqual(fields({ metadata: {} }), [
      ['apiVersion', 'FieldValueRequired'],
      ['kind', 'FieldValueRequired'],
    ]);
    const causes = validateObject({ apiVersion: 'v1', kind: 'Pod', metadata: {} });
    assert.deepEqual(
      causes.map((c) => c.field),
      ['apiVersion', 'kind'],
    );
    assert.equal(causes[0].message, 'Unsupported value: "v1": supported values: "meshctl.dev/v1alpha1"');
    assert.match(causes[1].message, /^Unsupported value: "Pod": supported values: "Mesh", "Node", /);
  });

  it('compiles every kind schema in strict mode', () => {
    assert.doesNotThrow(() => compileAllSchemas());
  });
});

describe('validateObject: metadata', () => {
  it('accepts every V1ObjectMeta field', () => {
    const metadata = {
      name: 'web',
      generateName: 'web-',
      uid: 'u-1',
      resourceVersion: '7',
      generation: 2,
      namespace: '',
      selfLink: '',
      creationTimestamp: '2026-08-27T12:00:00Z',
      deletionTimestamp: '2026-08-27T12:05:00.123+02:00',
      deletionGracePeriodSeconds: 0,
      labels: { app: 'web', 'meshctl.dev/site': 'home', empty: '' },
      annotations: { 'example.com/note': 'anything at all: ok' },
      ownerReferences: [
        { apiVersion: API, kind: 'Module', name: 'web', uid: 'u-0', controller: true, blockOwnerDeletion: true },
      ],
      finalizers: ['meshctl.dev/cleanup'],
      managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
    };
    assert.deepEqual(validateObject(route({}, metadata)), []);
  });

  it('rejects a namespace, an unknown metadata field and bad labels', () => {
    const causes = validateObject(
      route({}, { name: 'web', namespace: 'default', zone: 'x', labels: { 'no spaces': 'v', ok: 'not ok' } }),
    );
    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [
        ['metadata.zone', 'FieldValueNotSupported'],
        ['metadata.namespace', 'FieldValueInvalid'],
        ['metadata.labels', 'FieldValueInvalid'],
        ['metadata.labels.ok', 'FieldValueInvalid'],
      ],
    );
    assert.equal(causes[1].message, 'Invalid value: "default": must be empty: meshctl kinds are cluster-scoped');
    assert.match(causes[2].message, /^invalid key "no spaces": must be a qualified name/);
  });

  it('checks owner references and timestamps', () => {
    const causes = validateObject(
      route(
        {},
        {
          name: 'web',
          creationTimestamp: 'yesterday',
          ownerReferences: [{ apiVersion: API, kind: 'Module', name: 'web' }],
        },
      ),
    );
    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [
        ['metadata.creationTimestamp', 'FieldValueInvalid'],
        ['metadata.ownerReferences[0].uid', 'FieldValueRequired'],
      ],
    );
    assert.equal(
      causes[0].message,
      `Invalid value: "yesterday": must be an RFC 3339 date-time such as '2026-08-27T12:00:00Z'`,
    );
  });

  it('needs a name or generateName, and a singleton its one name', () => {
    assert.deepEqual(fields(route({}, {})), [['metadata.name', 'FieldValueRequired']]);
    assert.deepEqual(fields(route({}, { generateName: 'web-' })), []);
    assert.deepEqual(fields({ apiVersion: API, kind: 'Mesh', metadata: { name: 'mesh' } }), []);
    assert.deepEqual(fields({ apiVersion: API, kind: 'Mesh', metadata: { generateName: 'mesh-' } }), [
      ['metadata.generateName', 'FieldValueInvalid'],
    ]);
  });
});

describe('validateName', () => {
  const node = kindByKind('Node')!;
  const mesh = kindByKind('Mesh')!;
  it('accepts DNS-1123 subdomains', () => {
    assert.deepEqual(validateName(node, 'node-a.home'), []);
  });
  it('names what is wrong', () => {
    assert.deepEqual(
      validateName(node, undefined).map((c) => c.reason),
      ['FieldValueRequired'],
    );
    assert.deepEqual(
      validateName(node, 'a'.repeat(254)).map((c) => c.reason),
      ['FieldValueTooLong'],
    );
    assert.deepEqual(
      validateName(node, '-a').map((c) => c.reason),
      ['FieldValueInvalid'],
    );
    assert.deepEqual(validateName(mesh, 'mesh'), []);
    assert.match(validateName(mesh, 'prod')[0].message, /Mesh is a singleton; its only allowed name is "mesh"/);
  });
});

describe('validateObject: specs', () => {
  it('reports types, enums, ranges and formats with dotted paths', () => {
    assert.deepEqual(fields(route({ port: 70000, host: 'Web.Example.com', extra: true })), [
      ['spec.extra', 'FieldValueNotSupported'],
      ['spec.host', 'FieldValueInvalid'],
      ['spec.port', 'FieldValueInvalid'],
    ]);
    const cert = {
      apiVersion: API,
      kind: 'Certificate',
      metadata: { name: 'c' },
      spec: { dnsNames: [], node: 'a', issuer: 'vault', renewBefore: '30 days' },
    };
    const causes = validateObject(cert);
    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [
        ['spec.dnsNames', 'FieldValueRequired'],
        ['spec.issuer', 'FieldValueNotSupported'],
        ['spec.renewBefore', 'FieldValueInvalid'],
      ],
    );
    assert.equal(causes[1].message, 'Unsupported value: "vault": supported values: "acme", "internal"');
    const twice = { ...cert, spec: { dnsNames: ['a.example.com', 'b.example.com', 'a.example.com'], node: 'a' } };
    assert.deepEqual(validateObject(twice), [
      { field: 'spec.dnsNames[2]', reason: 'FieldValueDuplicate', message: 'Duplicate value: "a.example.com"' },
    ]);
  });

  it('validates each host resource by its kind', () => {
    const causes = validateObject(
      moduleWith([
        { id: 'd', kind: 'Directory', spec: { path: '/srv', content: 'x' } },
        {
          id: 'f',
          kind: 'File',
          spec: { path: '/srv/k', content: 'x', contentFrom: { certificate: 'c', key: 'key' } },
        },
        { id: 's', kind: 'Service', spec: { command: ['x'], env: { 'BAD-NAME': '1' }, driver: 'docker' } },
        {
          id: 'w',
          kind: 'WireGuard',
          spec: {
            interface: 'wg-mesh',
            address: '100.64.0.1/10',
            peers: [{ publicKey: 'short', allowedIPs: ['10.0.0.0/33'] }],
          },
        },
        { id: 'x', kind: 'Symlink', spec: {} },
        { id: 'y', spec: {} },
      ]),
    );
    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [
        ['spec.resources[0].spec.content', 'FieldValueNotSupported'],
        ['spec.resources[1].spec', 'FieldValueInvalid'],
        ['spec.resources[2].spec.driver', 'FieldValueNotSupported'],
        ['spec.resources[2].spec.env', 'FieldValueInvalid'],
        ['spec.resources[3].spec.peers[0].publicKey', 'FieldValueInvalid'],
        ['spec.resources[3].spec.peers[0].allowedIPs[0]', 'FieldValueInvalid'],
        ['spec.resources[4].kind', 'FieldValueNotSupported'],
        ['spec.resources[5].kind', 'FieldValueRequired'],
      ],
    );
    assert.equal(causes[1].message, 'content and contentFrom are mutually exclusive: give one of them');
    assert.equal(
      causes[6].message,
      'Unsupported value: "Symlink": supported values: "Directory", "File", "Service", "WireGuard"',
    );
  });

  it('requires unique ids and dependencies on earlier resources', () => {
    const causes = validateObject(
      moduleWith([
        { id: 'a', kind: 'Directory', spec: { path: '/a' }, dependsOn: ['b'] },
        { id: 'b', kind: 'Directory', spec: { path: '/b' }, dependsOn: ['a'] },
        { id: 'a', kind: 'Directory', spec: { path: '/c' } },
      ]),
    );
    assert.deepEqual(causes, [
      {
        field: 'spec.resources[0].dependsOn[0]',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "b": must be the id of an earlier resource in the list',
      },
      { field: 'spec.resources[2].id', reason: 'FieldValueDuplicate', message: 'Duplicate value: "a"' },
    ]);
  });

  it('checks status too: conditions and timestamps', () => {
    const node = {
      apiVersion: API,
      kind: 'Node',
      metadata: { name: 'a' },
      status: {
        reachable: true,
        lastSeen: '2026-08-27T12:00:00Z',
        declaration: { desiredGeneration: 3, appliedGeneration: 2 },
        overlay: { address: '100.64.0.2', publicKey: 'xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=' },
        certificates: [{ name: 'web', notAfter: '2026-11-25T12:00:00Z' }],
        conditions: [
          {
            type: 'Reachable',
            status: 'True',
            reason: 'HeartbeatReceived',
            message: '',
            lastTransitionTime: '2026-08-27T11:00:00Z',
          },
        ],
      },
    };
    assert.deepEqual(validateObject(node), []);
    node.status.conditions[0].status = 'yes';
    node.status.conditions[0].reason = 'not camel case';
    assert.deepEqual(fields(node), [
      ['status.conditions[0].status', 'FieldValueNotSupported'],
      ['status.conditions[0].reason', 'FieldValueInvalid'],
    ]);
  });

  it('checks events, which have no spec', () => {
    const ev = {
      apiVersion: API,
      kind: 'Event',
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Node', name: 'a' },
      type: 'Normal',
      reason: 'Joined',
    };
    assert.deepEqual(validateObject(ev), []);
    assert.deepEqual(fields({ ...ev, type: 'Info', spec: {} }), [
      ['spec', 'FieldValueNotSupported'],
      ['type', 'FieldValueNotSupported'],
    ]);
    assert.deepEqual(fields({ ...ev, involvedObject: undefined }), [['involvedObject', 'FieldValueRequired']]);
  });

  it('suggests the field an unknown one is a typo of', () => {
    const assignment = {
      apiVersion: API,
      kind: 'Assignment',
      metadata: { name: 'a' },
      spec: { module: 'web', nodee: 'x' },
    };
    const [typo, ...rest] = validateObject(assignment).filter((c) => c.reason === 'FieldValueNotSupported');
    assert.equal(typo?.message, 'unknown field "spec.nodee"; did you mean "spec.node"?');
    assert.deepEqual(rest, []);
    const [far] = validateObject(route({ banana: 1 }));
    assert.equal(far?.message, 'unknown field "spec.banana"');
  });

  it('makes a readable Invalid error', () => {
    const err = ApiError.invalid('Route', 'web', validateObject(route({ port: 'http' })));
    assert.equal(err.message, 'Route.meshctl.dev "web" is invalid: spec.port: must be integer');
    assert.equal(err.code, 422);
  });
});

describe('schemas', () => {
  /** Every object schema closes its properties (managedFields entries are the one declared exception). */
  function openObjects(node: unknown, path: string, out: string[]): string[] {
    if (Array.isArray(node)) node.forEach((n, i) => openObjects(n, `${path}/${i}`, out));
    else if (node !== null && typeof node === 'object') {
      const s = node as Record<string, unknown>;
      if (s.type === 'object' && s.additionalProperties === undefined && s.oneOf === undefined) out.push(path);
      for (const [k, v] of Object.entries(s)) openObjects(v, `${path}/${k}`, out);
    }
    return out;
  }

  it('all say additionalProperties for every object', () => {
    for (const file of readdirSync(SCHEMAS).filter((f) => f.endsWith('.schema.json'))) {
      const schema: unknown = JSON.parse(readFileSync(join(SCHEMAS, file), 'utf8'));
      assert.deepEqual(openObjects(schema, file, []), [], `${file} has open objects`);
    }
  });

  it('have a description on every property (or on the definition it refers to), which becomes the doc comment', () => {
    const files = readdirSync(SCHEMAS).filter((f) => f.endsWith('.schema.json'));
    const schemas = new Map(
      files.map((f) => [f, JSON.parse(readFileSync(join(SCHEMAS, f), 'utf8')) as Record<string, unknown>]),
    );
    const target = (file: string, ref: string): Record<string, unknown> | undefined => {
      const [where, pointer] = ref.split('#');
      const defs = schemas.get(where || file)?.definitions as Record<string, Record<string, unknown>> | undefined;
      return defs?.[pointer.replace('/definitions/', '')];
    };
    const undocumented: string[] = [];
    for (const [file, schema] of schemas) {
      const walk = (node: unknown, path: string): void => {
        if (node === null || typeof node !== 'object') return;
        const props = (node as { properties?: Record<string, Record<string, unknown>> }).properties ?? {};
        for (const [k, v] of Object.entries(props)) {
          const viaRef = typeof v.$ref === 'string' && target(file, v.$ref)?.description !== undefined;
          const selfExplaining =
            ['apiVersion', 'kind', 'metadata', 'conditions'].includes(k) || v.const !== undefined || viaRef;
          if (v.description === undefined && !selfExplaining) undocumented.push(`${path}.${k}`);
        }
        for (const [k, v] of Object.entries(node)) walk(v, k === 'properties' ? path : `${path}/${k}`);
      };
      walk(schema, file);
    }
    assert.deepEqual(undocumented, []);
  });
});

describe('validateStatusWrite', () => {
  const node = (spec: unknown, status: unknown) => ({
    apiVersion: API,
    kind: 'Node',
    metadata: { name: 'a' },
    spec,
    status,
  });

  it('checks the status against the kind schema, at its full path', () => {
    const causes = validateStatusWrite(node({}, { reachable: 'yes' }));
    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [['status.reachable', 'FieldValueInvalid']],
    );
    assert.deepEqual(validateStatusWrite(node({}, { reachable: true })), []);
  });

  it('does not judge the fields a status write keeps as stored', () => {
    const stored = node({ site: 42 }, { reachable: true });
    assert.notDeepEqual(validateObject(stored), [], 'the spec is invalid as a whole object');
    assert.deepEqual(validateStatusWrite(stored), []);
  });

  it('still checks the type meta', () => {
    assert.deepEqual(
      validateStatusWrite({ apiVersion: API, kind: 'Nope', metadata: { name: 'a' } }).map((c) => c.field),
      ['kind'],
    );
  });
});
