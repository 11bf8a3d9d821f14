import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evalJsonPath, parseJsonPath } from './json-path.ts';
import { KINDS, kindByKind, kindByPlural, resolveResource } from './kinds.ts';
import { schemaFor } from './schemas.ts';

function schemaOf(kind: string): { $id: string; properties: Record<string, { const?: string }> } {
  return schemaFor(kind) as { $id: string; properties: Record<string, { const?: string }> };
}

describe('KINDS', () => {
  it('lists the eleven kinds of meshctl.dev/v1alpha1', () => {
    assert.deepEqual(
      KINDS.map((k) => k.kind),
      [
        'Mesh',
        'Node',
        'Module',
        'Assignment',
        'Declaration',
        'Route',
        'Certificate',
        'JoinToken',
        'Backup',
        'ApplySet',
        'Event',
      ],
    );
  });

  it('gives every kind its own schema file, named after the kind', () => {
    for (const info of KINDS) {
      const schema = schemaOf(info.kind);
      assert.equal(schema.properties.kind.const, info.kind);
      assert.equal(schema.properties.apiVersion.const, 'meshctl.dev/v1alpha1');
      assert.ok(schema.$id.endsWith(`/${info.kind.toLowerCase()}.schema.json`), schema.$id);
      assert.equal(info.singular, info.kind.toLowerCase());
      assert.equal('status' in schema.properties, info.hasStatus, `${info.kind}: hasStatus matches the schema`);
    }
  });

  it('has no two kinds answering to the same name', () => {
    const names = KINDS.flatMap((k) => [k.plural, k.singular, ...k.shortNames]);
    assert.equal(new Set(names).size, names.length);
  });

  it('has print columns with valid paths, wide-only ones marked with priority 1', () => {
    for (const info of KINDS) {
      assert.ok(
        info.columns.some((c) => !c.priority),
        `${info.kind} shows something without -o wide`,
      );
      for (const col of info.columns) {
        assert.doesNotThrow(() => parseJsonPath(col.jsonPath), `${info.kind} ${col.name}`);
        assert.ok(col.priority === undefined || col.priority === 1);
      }
    }
  });

  it('makes Mesh a singleton named mesh, and ApplySet and Event statusless', () => {
    assert.equal(kindByKind('Mesh')?.singletonName, 'mesh');
    assert.deepEqual(
      KINDS.filter((k) => k.singletonName).map((k) => k.kind),
      ['Mesh'],
    );
    assert.deepEqual(
      KINDS.filter((k) => !k.hasStatus).map((k) => k.kind),
      ['ApplySet', 'Event'],
    );
  });

  it('prints the columns a person expects from a node', () => {
    const node = {
      spec: { site: 'home' },
      status: {
        lastSeen: '2026-08-27T12:00:00Z',
        declaration: { desiredGeneration: 4, appliedGeneration: 3 },
        conditions: [
          {
            type: 'Reachable',
            status: 'False',
            reason: 'HeartbeatMissed',
            message: '',
            lastTransitionTime: '2026-08-27T12:01:00Z',
          },
          {
            type: 'DeclarationApplied',
            status: 'False',
            reason: 'Pending',
            message: '',
            lastTransitionTime: '2026-08-27T12:01:00Z',
          },
        ],
      },
    };
    const cols = kindByKind('Node')!.columns.filter((c) => !c.priority);
    assert.deepEqual(
      cols.map((c) => c.name.toUpperCase()),
      ['SITE', 'REACHABLE', 'LAST SEEN', 'DESIRED', 'APPLIED', 'DECLARATION'],
    );
    assert.deepEqual(
      cols.map((c) => evalJsonPath(node, c.jsonPath)),
      ['home', 'False', '2026-08-27T12:00:00Z', 4, 3, 'Pending'],
    );
  });
});

describe('kindByPlural, kindByKind', () => {
  it('match exactly', () => {
    assert.equal(kindByPlural('jointokens')?.kind, 'JoinToken');
    assert.equal(kindByPlural('meshes')?.kind, 'Mesh');
    assert.equal(kindByPlural('Nodes'), undefined);
    assert.equal(kindByKind('Certificate')?.plural, 'certificates');
    assert.equal(kindByKind('certificate'), undefined);
  });
});

describe('resolveResource', () => {
  it('resolves kind, plural, singular and short names, in any case', () => {
    for (const arg of ['node', 'nodes', 'Node', 'NODES', 'no', 'No'])
      assert.equal(resolveResource(arg)?.kind, 'Node', arg);
    for (const arg of ['mesh', 'meshes', 'Mesh']) assert.equal(resolveResource(arg)?.kind, 'Mesh', arg);
    assert.equal(resolveResource('JT')?.kind, 'JoinToken');
    assert.equal(resolveResource('JoinToken')?.kind, 'JoinToken');
    assert.equal(resolveResource('asg')?.kind, 'Assignment');
    assert.equal(resolveResource('decl')?.kind, 'Declaration');
    assert.equal(resolveResource('rt')?.kind, 'Route');
    assert.equal(resolveResource('cert')?.kind, 'Certificate');
    assert.equal(resolveResource('bk')?.kind, 'Backup');
    assert.equal(resolveResource('ev')?.kind, 'Event');
    assert.equal(resolveResource('mod')?.kind, 'Module');
  });

  it('accepts the group suffix, with or without the version', () => {
    assert.equal(resolveResource('nodes.meshctl.dev')?.kind, 'Node');
    assert.equal(resolveResource('cert.meshctl.dev')?.kind, 'Certificate');
    assert.equal(resolveResource('Routes.v1alpha1.meshctl.dev')?.kind, 'Route');
  });

  it('returns undefined for anything else', () => {
    for (const arg of ['pods', 'pod', '', ' ', '.meshctl.dev', 'nodes.example.com', 'node.', 'nodess']) {
      assert.equal(resolveResource(arg), undefined, JSON.stringify(arg));
    }
  });
});
