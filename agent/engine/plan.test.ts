import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { plan } from './plan.ts';
import { directoryDriver } from '../drivers/directory.ts';
import { fileDriver } from '../drivers/file.ts';
import type { DeclaredResource } from '../../api/v1alpha1/generated/declaration.ts';
import type { DriverRegistry, InventoryEntry, Observed, Step } from './types.ts';

const drivers: DriverRegistry = { Directory: directoryDriver, File: fileDriver };
const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const file = (id: string, path: string, content = 'x', owner = 'x@v1'): DeclaredResource => ({
  id,
  owner,
  kind: 'File',
  spec: { path, content },
});
const dir = (id: string, path: string, owner = 'x@v1'): DeclaredResource => ({
  id,
  owner,
  kind: 'Directory',
  spec: { path },
});
const owned = (r: DeclaredResource, extra: Partial<InventoryEntry> = {}): InventoryEntry => ({
  ...r,
  appliedAt: '2026-01-01T00:00:00Z',
  ...extra,
});
const fileThere = (content: string): Observed => ({ exists: true, type: 'file', mode: 0o644, sha256: sha(content) });
const dirThere: Observed = { exists: true, type: 'directory', mode: 0o755 };
const absent: Observed = { exists: false };
const brief = (steps: Step[]) => steps.map((s) => `${s.action} ${s.id}`);

test('plan: declared resources in order (create, noop, update), then nothing else', () => {
  const d = dir('d', '/srv/app');
  const f1 = file('f1', '/srv/app/a', 'same');
  const f2 = file('f2', '/srv/app/b', 'new');
  const steps = plan({
    desired: [d, f1, f2],
    inventory: [owned(f1), owned(f2, { spec: { path: '/srv/app/b', content: 'old' } })],
    observed: new Map([
      ['d', absent],
      ['f1', fileThere('same')],
      ['f2', fileThere('old')],
    ]),
    drivers,
  });
  assert.deepEqual(brief(steps), ['create d', 'noop f1', 'update f2']);
  assert.deepEqual(
    steps[2]?.changes?.map((c) => c.field),
    ['content'],
  );
});

test('plan: entries no longer declared are removed in reverse creation order, after the declared ones', () => {
  const [a, b, c, d] = [dir('a', '/a'), file('b', '/a/b'), dir('c', '/c'), file('d', '/c/d')];
  const steps = plan({
    desired: [b],
    inventory: [a, b, c, d].map((r) => owned(r)),
    observed: new Map([['b', fileThere('x')]]),
    drivers,
  });
  assert.deepEqual(brief(steps), ['noop b', 'remove d', 'remove c', 'remove a']);
  assert.deepEqual(steps[1]?.spec, d.spec, 'a removal carries the spec as applied');
});

test('plan: an existing object the inventory does not own is a conflict, never an update', () => {
  const steps = plan({
    desired: [file('f', '/etc/hosts'), dir('d', '/home')],
    inventory: [],
    observed: new Map([
      ['f', fileThere('127.0.0.1 localhost')],
      ['d', dirThere],
    ]),
    drivers,
  });
  assert.deepEqual(brief(steps), ['conflict f', 'conflict d']);
  assert.match(steps[0]?.message ?? '', /path:\/etc\/hosts already exists and is not owned/);
});

test('plan: the same path or id declared twice is a conflict for the second', () => {
  const steps = plan({
    desired: [file('a', '/x'), file('b', '/x/'), file('a', '/y')],
    inventory: [],
    observed: new Map([
      ['a', absent],
      ['b', absent],
    ]),
    drivers,
  });
  assert.deepEqual(brief(steps), ['create a', 'conflict b', 'conflict a']);
  assert.match(steps[1]?.message ?? '', /already declared by resource a/);
});

test('plan: a new id at the path an undeclared owned entry holds takes it over (no conflict, no removal)', () => {
  const old = file('x/v1/conf', '/srv/conf', 'v1');
  const next = file('x/v2/conf', '/srv/conf', 'v2', 'x@v2');
  const steps = plan({
    desired: [next],
    inventory: [owned(old)],
    observed: new Map([[next.id, fileThere('v1')]]),
    drivers,
  });
  assert.deepEqual(brief(steps), ['update x/v2/conf']);
  assert.equal(steps[0]?.replaces, 'x/v1/conf');
});

test('plan: a declared resource that moved to another path is updated, then its old object removed', () => {
  const before = file('conf', '/srv/v1.conf');
  const after = file('conf', '/srv/v2.conf');
  const steps = plan({ desired: [after], inventory: [owned(before)], observed: new Map([['conf', absent]]), drivers });
  assert.deepEqual(brief(steps), ['update conf', 'remove conf']);
  assert.equal(steps[1]?.superseded, true);
  assert.deepEqual(steps[1]?.spec, before.spec);
  const taken = plan({
    desired: [after],
    inventory: [owned(before)],
    observed: new Map([['conf', fileThere('foreign')]]),
    drivers,
  });
  assert.deepEqual(brief(taken), ['conflict conf'], 'moving onto a foreign file is a conflict too');
});

test('plan: a pending (unconfirmed) creation is owned; unknown kinds and kind changes fail clearly', () => {
  const f = file('f', '/f');
  const pending = plan({
    desired: [f],
    inventory: [owned(f, { pending: true })],
    observed: new Map([['f', fileThere('x')]]),
    drivers,
  });
  assert.deepEqual(brief(pending), ['update f']);
  const wg: DeclaredResource = {
    id: 'wg',
    owner: 'o',
    kind: 'WireGuard',
    spec: { interface: 'wg0', address: '100.64.0.2/10' },
  };
  const [s] = plan({
    desired: [wg],
    inventory: [],
    observed: new Map([['wg', { exists: false, error: 'no driver for kind WireGuard' }]]),
    drivers,
  });
  assert.equal(s?.action, 'create');
  assert.match(s?.error ?? '', /no driver for kind WireGuard/);
  const changed = plan({
    desired: [dir('f', '/f')],
    inventory: [owned(f)],
    observed: new Map([['f', absent]]),
    drivers,
  });
  assert.deepEqual(brief(changed), ['conflict f']);
});

test('plan: an owner change alone is an update that records the new owner', () => {
  const f = file('f', '/f');
  const steps = plan({
    desired: [{ ...f, owner: 'y@v1' }],
    inventory: [owned(f)],
    observed: new Map([['f', fileThere('x')]]),
    drivers,
  });
  assert.deepEqual(
    steps[0]?.changes?.map((c) => c.field),
    ['owner'],
  );
});

test('plan: a step carries its dependsOn; a dependency not declared before it fails the step without applying', () => {
  const d = dir('d', '/d');
  const f = { ...file('f', '/d/f'), dependsOn: ['d'] };
  const ahead = { ...file('ahead', '/d/a'), dependsOn: ['later'] };
  const ghost = { ...file('ghost', '/d/g'), dependsOn: ['d', 'nope'] };
  const later = file('later', '/d/l');
  const steps = plan({
    desired: [d, f, ahead, ghost, later],
    inventory: [],
    observed: new Map(['d', 'f', 'ahead', 'ghost', 'later'].map((id) => [id, absent])),
    drivers,
  });
  assert.deepEqual(
    steps.map((s) => [s.id, s.action, s.dependsOn, s.error]),
    [
      ['d', 'create', undefined, undefined],
      ['f', 'create', ['d'], undefined],
      [
        'ahead',
        'create',
        ['later'],
        'depends on later, which is not declared before it (a dependency must come earlier in the list)',
      ],
      ['ghost', 'create', ['d', 'nope'], 'depends on nope, which is not declared'],
      ['later', 'create', undefined, undefined],
    ],
  );
});
