/**
 * The Assignment controller's shortcut (moduleVersionUnrendered): it says "not written yet" without rendering
 * only where rendering would say so too (declarationToWrite would write), and otherwise leaves the answer to it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deepFreeze } from '../api/meta/frozen.ts';
import type { Assignment, Declaration, Module, Node } from '../api/v1alpha1/generated/index.ts';
import { declarationToWrite, renderDeclaration } from '../api/v1alpha1/render-declaration.ts';
import { moduleVersionUnrendered } from './assignment-controller.ts';

const API = 'meshctl.dev/v1alpha1';
const node: Node = deepFreeze({ apiVersion: API, kind: 'Node', metadata: { name: 'n1', uid: 'uid-n1' } });
const mod = (version: string): Module =>
  deepFreeze({
    apiVersion: API,
    kind: 'Module',
    metadata: { name: 'web' },
    spec: { version, resources: [{ id: 'dir', kind: 'Directory', spec: { path: `/srv/web-${version}` } }] },
  });
const asg = (version?: string): Assignment =>
  deepFreeze({
    apiVersion: API,
    kind: 'Assignment',
    metadata: { name: 'web-n1', creationTimestamp: '2026-01-01T00:00:00Z', generation: 1 },
    spec: { module: 'web', node: 'n1', ...(version !== undefined ? { version } : {}) },
  });

/** The Declaration as stored after rendering `assignment` with the module at `module`'s version. */
function renderedAt(module: Module, assignment: Assignment): Declaration {
  const rendering = renderDeclaration({ node: 'n1', assignments: [assignment], modules: new Map([['web', module]]) });
  return deepFreeze(declarationToWrite({ node, rendering })!);
}

/** What the full rendering answers: the Declaration controller has yet to write (a write is due). */
function writeDue(module: Module, assignment: Assignment, declaration: Declaration): boolean {
  const rendering = renderDeclaration({
    node: 'n1',
    assignments: [assignment],
    modules: new Map([['web', module]]),
    current: declaration,
  });
  return declarationToWrite({ node, rendering, current: declaration }) !== undefined;
}

const caches = (module: Module | undefined, declaration: Declaration | undefined) => ({
  nodes: { get: (n: string) => (n === 'n1' ? node : undefined) },
  modules: { get: (m: string) => (m === 'web' ? module : undefined) },
  declarations: { get: (n: string) => (n === 'n1' ? declaration : undefined) },
});

test('a new module version not yet rendered is unrendered, as the full rendering says', () => {
  const v1 = mod('1.0.0');
  const v2 = mod('2.0.0');
  for (const assignment of [asg(), asg('2.0.0')]) {
    const decl = renderedAt(v1, asg());
    assert.equal(moduleVersionUnrendered(assignment, caches(v2, decl)), true);
    assert.equal(writeDue(v2, assignment, decl), true);
  }
});

test('otherwise the shortcut leaves the answer to the rendering', () => {
  const v1 = mod('1.0.0');
  const v2 = mod('2.0.0');
  const atV1 = renderedAt(v1, asg());
  // Rendered at the module's version: nothing is due.
  assert.equal(moduleVersionUnrendered(asg(), caches(v1, atV1)), false);
  assert.equal(writeDue(v1, asg(), atV1), false);
  // Pinned to the version the node holds while the module moved on: kept, nothing is due.
  assert.equal(moduleVersionUnrendered(asg('1.0.0'), caches(v2, atV1)), false);
  assert.equal(writeDue(v2, asg('1.0.0'), atV1), false);
  // No Declaration, no module, a Declaration being deleted: not the shortcut's to say.
  assert.equal(moduleVersionUnrendered(asg(), caches(v2, undefined)), false);
  assert.equal(moduleVersionUnrendered(asg(), caches(undefined, atV1)), false);
  const deleting = deepFreeze({ ...atV1, metadata: { ...atV1.metadata, deletionTimestamp: '2026-01-02T00:00:00Z' } });
  assert.equal(moduleVersionUnrendered(asg(), caches(v2, deleting)), false);
});
