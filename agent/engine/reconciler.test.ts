import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from './reconciler.ts';
import { createDriverRegistry } from '../drivers/registry.ts';
import { createProcessSupervisor } from '../drivers/process-supervisor.ts';
import { procArgv } from '../drivers/process-record.ts';
import { memoryInventoryStore, memoryLogger, tempHost } from './testing.ts';
import type { Clock } from '../../api/meta/clock.ts';
import { FakeClock } from '../../api/meta/fake-clock.ts';
import type { DeclaredResource } from '../../api/v1alpha1/generated/declaration.ts';

const forever = (tag: string): string[] => [process.execPath, '-e', `/* ${tag} */ setInterval(()=>{},1e9)`];
const running = (pid: unknown): boolean => typeof pid === 'number' && (procArgv(pid) ?? []).length > 0;

function setup(clock?: Clock, logger = memoryLogger()) {
  const h = tempHost();
  const store = memoryInventoryStore();
  const supervisor = createProcessSupervisor({
    stateDir: h.stateDir,
    logger: memoryLogger(),
    backoff: { initialMs: 50 },
    stopGraceMs: 500,
    pollMs: 50,
  });
  const drivers = createDriverRegistry({ supervisor });
  const engine = createEngine({
    drivers,
    ctx: { ...h.ctx, logger },
    loadInventory: store.load,
    saveInventory: store.save,
    clock,
  });
  const pidOf = async (id: string) => (await supervisor.inspect(id))?.pid;
  const cleanup = async () => {
    await supervisor.stopAll();
    supervisor.close();
    h.cleanup();
  };
  return { h, store, supervisor, drivers, engine, pidOf, cleanup };
}

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
  const t = setup();
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
  const t = setup();
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

test('engine: a failing resource fails the resources that depend on it, other owners go on, and it backs off', async () => {
  let now = 1_000_000;
  const clock: Clock = {
    now: () => now,
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  };
  const t = setup(clock);
  try {
    const decl: DeclaredResource[] = [
      { id: 'a/dir', owner: 'a', kind: 'Directory', spec: { path: '/a' } },
      { id: 'b/file', owner: 'b', kind: 'File', spec: { path: '/b.txt', content: 'b' } },
      { id: 'a/broken', owner: 'a', kind: 'File', spec: { path: '/missing/x', content: 'x' } },
      { id: 'a/after', owner: 'a', kind: 'File', spec: { path: '/a/after', content: 'y' }, dependsOn: ['a/broken'] },
      { id: 'c/wg', owner: 'c', kind: 'WireGuard', spec: { interface: 'wg0', address: '100.64.0.2/10' } },
      { id: 'c/file', owner: 'c', kind: 'File', spec: { path: '/c.txt', content: 'c' }, dependsOn: ['c/wg'] },
    ];
    writeFileSync(join(t.h.root, 'b.txt'), "someone else's");
    const r = await t.engine.reconcile([
      ...decl,
      { id: 'b/later', owner: 'b', kind: 'File', spec: { path: '/b2.txt', content: 'b2' }, dependsOn: ['b/file'] },
    ]);
    assert.deepEqual(
      r.results.map((x) => `${x.id} ${x.state}`),
      [
        'a/dir Applied',
        'b/file Conflict',
        'a/broken Failed',
        'a/after DependencyFailed',
        'c/wg Failed',
        'c/file DependencyFailed',
        'b/later DependencyFailed',
      ],
    );
    assert.match(r.results[2]?.message ?? '', /parent directory \/missing/);
    assert.match(r.results[4]?.message ?? '', /no driver for kind WireGuard/);
    assert.equal(readFileSync(join(t.h.root, 'b.txt'), 'utf8'), "someone else's", 'a conflict never overwrites');
    assert.equal(existsSync(join(t.h.root, 'a/after')), false);
    assert.deepEqual(
      t.store.saved().map((e) => e.id),
      ['a/dir'],
      'a failed create that made nothing leaves no claim in the inventory',
    );

    const soon = await t.engine.reconcile(decl);
    assert.match(
      soon.results[2]?.message ?? '',
      new RegExp(`next attempt at ${new Date(now + 1000).toISOString()} after 1 failure`),
    );
    now += 1500;
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(t.h.root, 'missing'));
    const later = await t.engine.reconcile(decl);
    assert.deepEqual(
      later.results.slice(2, 4).map((x) => x.state),
      ['Applied', 'Applied'],
      'retried after the backoff, then its dependents ran',
    );
  } finally {
    await t.cleanup();
  }
});

test('engine: dependsOn decides who is skipped: dependents of a failure (transitively), not independent siblings', async () => {
  const t = setup();
  try {
    const file = (id: string, path: string, dependsOn?: string[]): DeclaredResource => ({
      id: `a/${id}`,
      owner: 'a',
      kind: 'File',
      spec: { path, content: id },
      ...(dependsOn ? { dependsOn: dependsOn.map((d) => `a/${d}`) } : {}),
    });
    const r = await t.engine.reconcile([
      { id: 'a/dir', owner: 'a', kind: 'Directory', spec: { path: '/a' } },
      file('broken', '/missing/x'),
      file('needs-broken', '/a/n', ['dir', 'broken']),
      file('needs-needs', '/a/nn', ['needs-broken']),
      file('sibling', '/a/s'),
      file('needs-dir', '/a/d', ['dir']),
      file('undeclared', '/a/u', ['nope']),
      file('forward', '/a/f', ['last']),
      file('last', '/a/l'),
    ]);
    assert.deepEqual(
      r.results.map((x) => `${x.id} ${x.state}`),
      [
        'a/dir Applied',
        'a/broken Failed',
        'a/needs-broken DependencyFailed',
        'a/needs-needs DependencyFailed',
        'a/sibling Applied',
        'a/needs-dir Applied',
        'a/undeclared Failed',
        'a/forward Failed',
        'a/last Applied',
      ],
    );
    assert.equal(r.results[2]?.message, 'not attempted: it depends on a/broken, which is Failed');
    assert.equal(r.results[3]?.message, 'not attempted: it depends on a/needs-broken, which is DependencyFailed');
    assert.equal(r.results[6]?.message, 'depends on a/nope, which is not declared');
    assert.match(r.results[7]?.message ?? '', /^depends on a\/last, which is not declared before it/);
    assert.deepEqual(
      ['n', 'nn', 'u', 'f'].filter((f) => existsSync(join(t.h.root, 'a', f))),
      [],
      'skipped and failed ones wrote nothing',
    );
    assert.deepEqual(
      ['s', 'd', 'l'].map((f) => readFileSync(join(t.h.root, 'a', f), 'utf8')),
      ['sibling', 'needs-dir', 'last'],
    );
  } finally {
    await t.cleanup();
  }
});

test('engine: a cold start (new engine and supervisor, same stores) is a no-op that adopts the running service', async () => {
  const t = setup();
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
  const t = setup();
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
  const t = setup();
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

test('engine: a File whose certificate is not held yet is Waiting (not written, logged at info, not backed off), so are its dependents; it applies once the content is there', async () => {
  const logger = memoryLogger();
  const t = setup(new FakeClock(), logger);
  const declared = (cert: { content: string } | { contentFrom: { certificate: string; key: 'cert' } }) =>
    [
      { id: 'tls/dir', owner: 'tls', kind: 'Directory', spec: { path: '/tls' } },
      { id: 'tls/cert', owner: 'tls', kind: 'File', spec: { path: '/tls/cert.pem', ...cert } },
      {
        id: 'tls/after',
        owner: 'tls',
        kind: 'File',
        spec: { path: '/tls/after', content: 'a' },
        dependsOn: ['tls/cert'],
      },
      { id: 'other/file', owner: 'other', kind: 'File', spec: { path: '/other', content: 'o' } },
    ] satisfies DeclaredResource[];
  try {
    for (const round of [1, 2]) {
      // The second round runs at the same instant: a failure would now be waiting out its retry delay.
      const r = await t.engine.reconcile(declared({ contentFrom: { certificate: 'web', key: 'cert' } }));
      assert.deepEqual(
        r.results.map((x) => x.state),
        ['Applied', 'Waiting', 'Waiting', 'Applied'],
        `round ${round}`,
      );
      assert.match(
        r.results[1].message ?? '',
        /waits for the cert of certificate "web", which this node does not hold yet/,
      );
      assert.equal(r.results[2].message, 'not attempted: it depends on tls/cert, which is Waiting');
    }
    assert.equal(existsSync(join(t.h.root, 'tls/cert.pem')), false, 'no empty certificate file is written');
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'error'),
      [],
      'waiting for a certificate is not an error',
    );
    assert.ok(
      logger.lines.some((l) => l.level === 'info' && l.msg === 'Waiting to create File'),
      'logged at info',
    );
    assert.deepEqual(
      t.store.saved().map((e) => e.id),
      ['tls/dir', 'other/file'],
      'a Waiting File is not claimed',
    );

    const held = await t.engine.reconcile(declared({ content: 'PEM\n' }));
    assert.deepEqual(
      held.results.map((x) => x.state),
      ['Applied', 'Applied', 'Applied', 'Applied'],
    );
    assert.equal(readFileSync(join(t.h.root, 'tls/cert.pem'), 'utf8'), 'PEM\n');
  } finally {
    await t.cleanup();
  }
});
