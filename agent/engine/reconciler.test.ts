// The engine's lifecycle of applied resources: apply, idempotence and drift, version changes, cold start, restarts
// and moves (what it reports when a resource cannot be applied is in reconcile-outcomes.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from './reconciler.ts';
import { createDriverRegistry } from '../drivers/registry.ts';
import { createProcessSupervisor } from '../drivers/process-supervisor.ts';
import { procArgv } from '../drivers/process-record.ts';
import { engineSetup } from './engine-testing.ts';
import { memoryLogger } from './testing.ts';
import type { DeclaredResource } from '../../api/v1alpha1/generated/declaration.ts';

const forever = (tag: string): string[] => [process.execPath, '-e', `/* ${tag} */ setInterval(()=>{},1e9)`];
const running = (pid: unknown): boolean => typeof pid === 'number' && (procArgv(pid) ?? []).length > 0;

const moduleV1: DeclaredResource[] = [
  { id: 'x/app-dir', owner: 'x@v1', kind: 'Directory', spec: { path: '/srv/app', mode: '0755' } },
  {
    id: 'x/config',
    owner: 'x@v1',
    kind: 'File',
    spec: { path: '/srv/app/config', content: 'greeting=hello\n', mode: '0640' },
  },
  {
    id: 'x/server',
    owner: 'x@v1',
    kind: 'Service',
    spec: { driver: 'process', command: forever('v1'), workingDirectory: '/srv/app' },
  },
];

test('engine: applies a declaration, then a second reconcile is all no-op (idempotence), and drift is corrected', async () => {
  const t = engineSetup();
  try {
    const first = await t.engine.reconcile(moduleV1);
    assert.deepEqual(
      first.results.map((r) => `${r.action}:${r.state}`),
      ['create:Applied', 'create:Applied', 'create:Applied'],
    );
    assert.equal(readFileSync(join(t.h.root, 'srv/app/config'), 'utf8'), 'greeting=hello\n');
    assert.ok(running(await t.pidOf('x/server')));
    assert.deepEqual(
      t.store.saved().map((e) => [e.id, e.pending ?? false]),
      [
        ['x/app-dir', false],
        ['x/config', false],
        ['x/server', false],
      ],
    );

    const second = await t.engine.reconcile(moduleV1);
    assert.deepEqual(
      second.steps.map((s) => s.action),
      ['noop', 'noop', 'noop'],
    );
    assert.equal(typeof second.durationMs, 'number');

    rmSync(join(t.h.root, 'srv/app/config'));
    const third = await t.engine.reconcile(moduleV1);
    assert.deepEqual(
      third.steps.map((s) => s.action),
      ['noop', 'update', 'noop'],
    );
    assert.equal(
      readFileSync(join(t.h.root, 'srv/app/config'), 'utf8'),
      'greeting=hello\n',
      'a deleted managed file comes back',
    );
  } finally {
    await t.cleanup();
  }
});

test('engine: a new module version removes the old resources in reverse order and leaves unowned files alone', async () => {
  const t = engineSetup();
  try {
    await t.engine.reconcile(moduleV1);
    const oldPid = await t.pidOf('x/server');
    writeFileSync(join(t.h.root, 'srv/app/notes.txt'), 'written by a person');
    const moduleV2: DeclaredResource[] = [
      { id: 'x/v2/dir', owner: 'x@v2', kind: 'Directory', spec: { path: '/srv/app2' } },
      { id: 'x/v2/config', owner: 'x@v2', kind: 'File', spec: { path: '/srv/app2/config', content: 'greeting=hi\n' } },
      {
        id: 'x/v2/server',
        owner: 'x@v2',
        kind: 'Service',
        spec: { driver: 'process', command: forever('v2'), workingDirectory: '/srv/app2' },
      },
    ];
    const r = await t.engine.reconcile(moduleV2);
    assert.deepEqual(
      r.results.map((x) => `${x.action} ${x.id} ${x.state}`),
      [
        'create x/v2/dir Applied',
        'create x/v2/config Applied',
        'create x/v2/server Applied',
        'remove x/server Removed',
        'remove x/config Removed',
        'remove x/app-dir Retained',
      ],
    );
    assert.equal(running(oldPid), false, 'the old service was stopped');
    assert.ok(running(await t.pidOf('x/v2/server')));
    assert.equal(existsSync(join(t.h.root, 'srv/app/config')), false);
    assert.equal(
      readFileSync(join(t.h.root, 'srv/app/notes.txt'), 'utf8'),
      'written by a person',
      'unowned file untouched',
    );
    assert.match(r.results[5]?.message ?? '', /not empty/);
    assert.deepEqual(
      t.store.saved().map((e) => e.id),
      ['x/app-dir', 'x/v2/dir', 'x/v2/config', 'x/v2/server'],
      'the retained directory stays owned',
    );

    rmSync(join(t.h.root, 'srv/app/notes.txt'));
    const again = await t.engine.reconcile(moduleV2);
    assert.deepEqual(
      again.results.map((x) => `${x.action} ${x.state}`),
      ['noop Applied', 'noop Applied', 'noop Applied', 'remove Removed'],
    );
    assert.equal(existsSync(join(t.h.root, 'srv/app')), false, 'once empty, the owned directory is removed');
  } finally {
    await t.cleanup();
  }
});

test('engine: a cold start (new engine and supervisor, same stores) is a no-op that adopts the running service', async () => {
  const t = engineSetup();
  try {
    await t.engine.reconcile(moduleV1);
    const pid = await t.pidOf('x/server');
    t.supervisor.close();
    const supervisor = createProcessSupervisor({
      stateDir: t.h.stateDir,
      logger: memoryLogger(),
      pollMs: 50,
      stopGraceMs: 500,
    });
    try {
      const engine = createEngine({
        drivers: createDriverRegistry({ supervisor }),
        ctx: t.h.ctx,
        loadInventory: t.store.load,
        saveInventory: t.store.save,
      });
      const r = await engine.reconcile(moduleV1);
      assert.deepEqual(
        r.steps.map((s) => s.action),
        ['noop', 'noop', 'noop'],
      );
      assert.equal((await supervisor.inspect('x/server'))?.pid, pid);
      assert.equal(
        (await engine.plan(moduleV1)).every((s) => s.action === 'noop'),
        true,
        'dry-run agrees',
      );
    } finally {
      await supervisor.stopAll();
      supervisor.close();
    }
  } finally {
    await t.cleanup();
  }
});

test('engine: a spec change of a process service restarts it with the new command', async () => {
  const t = engineSetup();
  try {
    await t.engine.reconcile(moduleV1);
    const pid = await t.pidOf('x/server');
    const changed = moduleV1.map((r) =>
      r.id === 'x/server' && r.kind === 'Service' ? { ...r, spec: { ...r.spec, command: forever('v1-patched') } } : r,
    );
    const res = await t.engine.reconcile(changed);
    assert.deepEqual(
      res.steps.map((s) => s.action),
      ['noop', 'noop', 'update'],
    );
    const next = await t.pidOf('x/server');
    assert.notEqual(next, pid);
    assert.equal(running(pid), false);
    assert.match((procArgv(next!) ?? []).join(' '), /v1-patched/);
  } finally {
    await t.cleanup();
  }
});

test('engine: a resource that moves path replaces its old object; a new id at an owned path takes it over', async () => {
  const t = engineSetup();
  try {
    const dir: DeclaredResource = { id: 'x/dir', owner: 'x@v1', kind: 'Directory', spec: { path: '/srv' } };
    const conf = (path: string, id = 'x/conf'): DeclaredResource => ({
      id,
      owner: 'x@v1',
      kind: 'File',
      spec: { path, content: 'c\n' },
    });
    await t.engine.reconcile([dir, conf('/srv/v1.conf')]);
    const moved = await t.engine.reconcile([dir, conf('/srv/v2.conf')]);
    assert.deepEqual(
      moved.results.map((r) => `${r.action} ${r.id} ${r.state}`),
      ['noop x/dir Applied', 'update x/conf Applied', 'remove x/conf Removed'],
    );
    assert.equal(existsSync(join(t.h.root, 'srv/v1.conf')), false);
    assert.equal(readFileSync(join(t.h.root, 'srv/v2.conf'), 'utf8'), 'c\n');
    assert.deepEqual(
      t.store.saved().map((e) => [e.id, (e.spec as { path: string }).path, e.superseded]),
      [
        ['x/dir', '/srv', undefined],
        ['x/conf', '/srv/v2.conf', undefined],
      ],
    );

    const renamed = await t.engine.reconcile([dir, conf('/srv/v2.conf', 'x/v2/conf')]);
    assert.deepEqual(
      renamed.results.map((r) => `${r.action} ${r.id} ${r.state}`),
      ['noop x/dir Applied', 'update x/v2/conf Applied'],
    );
    assert.equal(readFileSync(join(t.h.root, 'srv/v2.conf'), 'utf8'), 'c\n');
    assert.deepEqual(
      t.store.saved().map((e) => e.id),
      ['x/dir', 'x/v2/conf'],
    );
  } finally {
    await t.cleanup();
  }
});
