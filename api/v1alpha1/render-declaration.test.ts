import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Assignment, Declaration, Module, ModuleResource, Node } from './generated/index.ts';
import {
  MODULE_VERSION_ENV,
  declarationToWrite,
  renderDeclaration,
  type Rendering,
  type RenderInput,
} from './render-declaration.ts';
import { OWNERS_ANNOTATION } from './owner-records.ts';

const dir = (id: string, path: string): ModuleResource => ({ id, kind: 'Directory', spec: { path } });
const file = (id: string, path: string, content: string, dependsOn?: string[]): ModuleResource => ({
  id,
  kind: 'File',
  spec: { path, content },
  ...(dependsOn ? { dependsOn } : {}),
});

function mod(name: string, version: string, resources: ModuleResource[]): Module {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Module', metadata: { name }, spec: { version, resources } };
}

function asg(name: string, spec: Assignment['spec'], created = '2026-01-01T00:00:00Z'): Assignment {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Assignment',
    metadata: { name, creationTimestamp: created, generation: 1 },
    spec,
  };
}

const node: Node = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'a', uid: 'uid-a' } };

const modules = (...ms: Module[]): Map<string, Module> => new Map(ms.map((m) => [m.metadata.name!, m]));

/** What the store would hold after writing `rendering` over `current` (metadata.generation bumped on spec change). */
function stored(rendering: Rendering, current?: Declaration): Declaration {
  const next = declarationToWrite({ node, rendering, current });
  if (!next) return current!;
  const generation = (current?.metadata.generation ?? 0) + (current && !rendering.changed ? 0 : 1);
  return { ...next, metadata: { ...next.metadata, generation, resourceVersion: String(Math.random()) } };
}

function render(input: Omit<RenderInput, 'node'>): { rendering: Rendering; decl: Declaration } {
  const rendering = renderDeclaration({ node: 'a', ...input });
  return { rendering, decl: stored(rendering, input.current) };
}

const web = mod('web', '1.0.0', [dir('dir', '/srv/web'), file('msg', '/srv/web/m', 'v1', ['dir'])]);

test("renders the node's assignments in creation order, then name, with prefixed ids, owners and dependsOn", () => {
  const db = mod('db', '2.0.0', [dir('data', '/srv/db')]);
  const assignments = [
    asg('web-a', { module: 'web', node: 'a' }, '2026-01-02T00:00:00Z'),
    asg('db-b', { module: 'db', node: 'a' }, '2026-01-01T00:00:00Z'),
    asg('db-a', { module: 'db', node: 'a' }, '2026-01-01T00:00:00Z'),
    asg('web-other', { module: 'web', node: 'b' }),
  ];
  const { rendering } = render({ assignments, modules: modules(web, db) });
  assert.deepEqual(rendering.spec.resources, [
    { id: 'db-a/data', owner: 'db-a', version: '2.0.0', kind: 'Directory', spec: { path: '/srv/db' } },
    { id: 'db-b/data', owner: 'db-b', version: '2.0.0', kind: 'Directory', spec: { path: '/srv/db' } },
    { id: 'web-a/dir', owner: 'web-a', version: '1.0.0', kind: 'Directory', spec: { path: '/srv/web' } },
    {
      id: 'web-a/msg',
      owner: 'web-a',
      version: '1.0.0',
      kind: 'File',
      spec: { path: '/srv/web/m', content: 'v1' },
      dependsOn: ['web-a/dir'],
    },
  ]);
  assert.equal(rendering.spec.generation, 1);
  assert.equal(rendering.changed, true);
  assert.deepEqual(rendering.owners, {
    'db-a': { version: '2.0.0', generation: 1 },
    'db-b': { version: '2.0.0', generation: 1 },
    'web-a': { version: '1.0.0', generation: 1 },
  });
  assert.deepEqual(
    rendering.outcomes.map((o) => o.owner),
    ['db-a', 'db-b', 'web-a'],
  );
  assert.deepEqual(rendering.outcomes[2].rendered, {
    version: '1.0.0',
    generation: 1,
    ids: ['web-a/dir', 'web-a/msg'],
  });
});

test('ids cannot collide across assignments even when names contain dots', () => {
  const m1 = mod('m1', '1', [dir('a.dir', '/x')]);
  const m2 = mod('m2', '1', [dir('dir', '/y')]);
  const { rendering } = render({
    assignments: [asg('web', { module: 'm1', node: 'a' }), asg('web.a', { module: 'm2', node: 'a' })],
    modules: modules(m1, m2),
  });
  assert.deepEqual(
    rendering.spec.resources.map((r) => r.id),
    ['web/a.dir', 'web.a/dir'],
  );
});

test('a node without assignments gets an empty declaration, owned by the node', () => {
  const { decl } = render({ assignments: [], modules: modules() });
  assert.deepEqual(decl.spec, { generation: 1, resources: [] });
  assert.deepEqual(decl.metadata.ownerReferences, [
    {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Node',
      name: 'a',
      uid: 'uid-a',
      controller: true,
      blockOwnerDeletion: true,
    },
  ]);
  assert.equal(decl.metadata.annotations?.[OWNERS_ANNOTATION], '{}');
});

test('rendering the same world again changes nothing and writes nothing', () => {
  const assignments = [asg('web-a', { module: 'web', node: 'a' })];
  const first = render({ assignments, modules: modules(web) });
  const withStatus: Declaration = {
    ...first.decl,
    metadata: { ...first.decl.metadata, labels: { x: 'y' } },
    status: { observedGeneration: 1 },
  };
  const again = renderDeclaration({ node: 'a', assignments, modules: modules(web), current: withStatus });
  assert.equal(again.changed, false);
  assert.equal(again.spec.generation, 1);
  assert.equal(declarationToWrite({ node, rendering: again, current: withStatus }), undefined);
});

test('a content change bumps spec.generation by one; unchanged owners keep theirs', () => {
  const other = mod('other', '1', [dir('d', '/o')]);
  const assignments = [
    asg('other-a', { module: 'other', node: 'a' }),
    asg('web-a', { module: 'web', node: 'a' }, '2026-02-01T00:00:00Z'),
  ];
  const first = render({ assignments, modules: modules(web, other) });
  const web2 = mod('web', '2.0.0', [dir('dir', '/srv/web'), file('msg', '/srv/web/m', 'v2', ['dir'])]);
  const second = render({ assignments, modules: modules(web2, other), current: first.decl });
  assert.equal(second.rendering.changed, true);
  assert.equal(second.rendering.spec.generation, 2);
  assert.deepEqual(second.rendering.owners, {
    'other-a': { version: '1', generation: 1 },
    'web-a': { version: '2.0.0', generation: 2 },
  });
});

test('a version-only change is a new generation: every resource carries the version, a Service gets it in its env', () => {
  const svc: ModuleResource = {
    id: 'svc',
    kind: 'Service',
    dependsOn: ['dir'],
    spec: { command: ['greet'], env: { MODE: 'x', MESHCTL_MODULE_VERSION: 'ignored' }, workingDirectory: '/srv/web' },
  };
  const resources = [dir('dir', '/srv/web'), svc];
  const other = mod('other', '1', [dir('d', '/o')]);
  const assignments = [
    asg('other-a', { module: 'other', node: 'a' }),
    asg('web-a', { module: 'web', node: 'a' }, '2026-02-01T00:00:00Z'),
  ];
  const first = render({ assignments, modules: modules(mod('web', '1.0.0', resources), other) });
  const second = render({ assignments, modules: modules(mod('web', '1.1.0', resources), other), current: first.decl });
  assert.equal(second.rendering.changed, true);
  assert.equal(second.rendering.spec.generation, 2);
  assert.deepEqual(second.rendering.owners, {
    'other-a': { version: '1', generation: 1 },
    'web-a': { version: '1.1.0', generation: 2 },
  });
  assert.deepEqual(
    second.rendering.spec.resources.map((r) => [r.id, r.version]),
    [
      ['other-a/d', '1'],
      ['web-a/dir', '1.1.0'],
      ['web-a/svc', '1.1.0'],
    ],
  );
  const service = second.rendering.spec.resources[2];
  assert.equal(service.kind, 'Service');
  assert.deepEqual(service.spec, {
    command: ['greet'],
    env: { MODE: 'x', [MODULE_VERSION_ENV]: '1.1.0' },
    workingDirectory: '/srv/web',
  });
  assert.equal(MODULE_VERSION_ENV, 'MESHCTL_MODULE_VERSION');
  assert.deepEqual(svc.spec, {
    command: ['greet'],
    env: { MODE: 'x', MESHCTL_MODULE_VERSION: 'ignored' },
    workingDirectory: '/srv/web',
  });
});

test("spec.generation follows the stored spec.generation, not the store's metadata.generation", () => {
  const assignments = [asg('web-a', { module: 'web', node: 'a' })];
  const first = render({ assignments, modules: modules(web) });
  const current = { ...first.decl, metadata: { ...first.decl.metadata, generation: 7 } };
  const web2 = mod('web', '2.0.0', [dir('dir', '/srv/web')]);
  const next = renderDeclaration({ node: 'a', assignments, modules: modules(web2), current });
  assert.equal(next.spec.generation, 2);
  assert.deepEqual(next.owners, { 'web-a': { version: '2.0.0', generation: 2 } });
});

test('deleting an assignment removes its resources in a new generation; the others keep their record', () => {
  const other = mod('other', '1', [dir('d', '/o')]);
  const both = [
    asg('web-a', { module: 'web', node: 'a' }),
    asg('other-a', { module: 'other', node: 'a' }, '2026-03-01T00:00:00Z'),
  ];
  const first = render({ assignments: both, modules: modules(web, other) });
  const second = render({ assignments: both.slice(1), modules: modules(web, other), current: first.decl });
  assert.deepEqual(
    second.rendering.spec.resources.map((r) => r.id),
    ['other-a/d'],
  );
  assert.equal(second.rendering.spec.generation, 2);
  assert.deepEqual(second.rendering.owners, { 'other-a': { version: '1', generation: 1 } });
});

test('a module version change rolls followers; a pinned assignment keeps its version until it is changed', () => {
  const assignments = [
    asg('follow', { module: 'web', node: 'a' }),
    asg('pinned', { module: 'web', node: 'a', version: '1.0.0' }),
  ];
  const v1 = render({ assignments, modules: modules(web) });
  const web2 = mod('web', '2.0.0', [dir('dir', '/srv/web2')]);
  const v2 = render({ assignments, modules: modules(web2), current: v1.decl });
  assert.deepEqual(
    v2.rendering.spec.resources.map((r) => `${r.id}:${'path' in r.spec ? r.spec.path : ''}`),
    ['follow/dir:/srv/web2', 'pinned/dir:/srv/web', 'pinned/msg:/srv/web/m'],
  );
  assert.deepEqual(v2.rendering.owners, {
    follow: { version: '2.0.0', generation: 2 },
    pinned: { version: '1.0.0', generation: 1 },
  });
  // Rendering again holds the pinned resources steady.
  const again = renderDeclaration({ node: 'a', assignments, modules: modules(web2), current: v2.decl });
  assert.equal(again.changed, false);
  // Moving the pin to the module's current version rolls it.
  const moved = [assignments[0], asg('pinned', { module: 'web', node: 'a', version: '2.0.0' })];
  const v3 = render({ assignments: moved, modules: modules(web2), current: v2.decl });
  assert.deepEqual(
    v3.rendering.spec.resources.map((r) => r.id),
    ['follow/dir', 'pinned/dir'],
  );
  assert.deepEqual(v3.rendering.owners.pinned, { version: '2.0.0', generation: 3 });
  assert.deepEqual(v3.rendering.owners.follow, { version: '2.0.0', generation: 2 });
});

test('a pin to a version that is neither current nor held renders nothing: VersionNotAvailable naming both', () => {
  const { rendering } = render({
    assignments: [asg('old', { module: 'web', node: 'a', version: '0.9.0' })],
    modules: modules(web),
  });
  assert.deepEqual(rendering.spec.resources, []);
  assert.deepEqual(rendering.owners, {});
  assert.equal(rendering.outcomes[0].problem?.reason, 'VersionNotAvailable');
  assert.match(rendering.outcomes[0].problem.message, /0\.9\.0.*1\.0\.0/);
});

test('a pin to a version that does not exist keeps what the node already runs, and says so', () => {
  const assignments = [asg('p', { module: 'web', node: 'a' })];
  const v1 = render({ assignments, modules: modules(web) });
  const typo = render({
    assignments: [asg('p', { module: 'web', node: 'a', version: '1.0.9' })],
    modules: modules(web),
    current: v1.decl,
  });
  assert.equal(typo.rendering.changed, false, 'the running resources stay');
  assert.deepEqual(typo.rendering.spec.resources, v1.rendering.spec.resources);
  assert.deepEqual(typo.rendering.owners, { p: { version: '1.0.0', generation: 1 } });
  assert.equal(typo.rendering.outcomes[0].problem?.reason, 'VersionNotAvailable');
  assert.match(typo.rendering.outcomes[0].problem.message, /1\.0\.9 .*not available.*keeps version 1\.0\.0/);
});

test('a pinned assignment whose held version was never recorded renders nothing', () => {
  const first = render({ assignments: [asg('p', { module: 'web', node: 'a' })], modules: modules(web) });
  const lost: Declaration = { ...first.decl, metadata: { ...first.decl.metadata, annotations: {} } };
  const web2 = mod('web', '2.0.0', []);
  const { rendering } = render({
    assignments: [asg('p', { module: 'web', node: 'a', version: '1.0.0' })],
    modules: modules(web2),
    current: lost,
  });
  assert.equal(rendering.outcomes[0].problem?.reason, 'VersionNotAvailable');
  assert.deepEqual(rendering.spec.resources, []);
});

test('a missing module renders nothing for its assignment, and the others still render', () => {
  const { rendering } = render({
    assignments: [asg('x', { module: 'nope', node: 'a' }), asg('w', { module: 'web', node: 'a' })],
    modules: modules(web),
  });
  assert.deepEqual(
    rendering.outcomes.find((o) => o.owner === 'x'),
    { owner: 'x', problem: { reason: 'ModuleNotFound', message: 'module "nope" not found' } },
  );
  assert.deepEqual(
    rendering.spec.resources.map((r) => r.id),
    ['w/dir', 'w/msg'],
  );
});

test('an id longer than the schema allows renders nothing: InvalidResourceId', () => {
  const long = mod('long', '1', [dir('d'.repeat(250), '/x')]);
  const { rendering } = render({ assignments: [asg('abcd', { module: 'long', node: 'a' })], modules: modules(long) });
  assert.equal(rendering.outcomes[0].problem?.reason, 'InvalidResourceId');
  assert.deepEqual(rendering.spec.resources, []);
});

test('the declaration to write keeps foreign metadata, and a metadata-only change writes without a new generation', () => {
  const first = render({ assignments: [asg('w', { module: 'web', node: 'a' })], modules: modules(web) });
  const current: Declaration = {
    ...first.decl,
    metadata: {
      ...first.decl.metadata,
      labels: { keep: 'me' },
      annotations: { ...first.decl.metadata.annotations, other: 'x' },
    },
  };
  const renewed: Node = { ...node, metadata: { name: 'a', uid: 'uid-a2' } };
  const rendering = renderDeclaration({
    node: 'a',
    assignments: [asg('w', { module: 'web', node: 'a' })],
    modules: modules(web),
    current,
  });
  const next = declarationToWrite({ node: renewed, rendering, current });
  assert.ok(next, 'a new node uid is written');
  assert.equal(next.spec.generation, 1);
  assert.equal(
    next.metadata.resourceVersion,
    current.metadata.resourceVersion,
    'optimistic concurrency on the stored version',
  );
  assert.deepEqual(next.metadata.labels, { keep: 'me' });
  assert.equal(next.metadata.annotations?.other, 'x');
  assert.equal(next.metadata.ownerReferences?.length, 1);
  assert.equal(next.metadata.ownerReferences?.[0]?.uid, 'uid-a2');
});
