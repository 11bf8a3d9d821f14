// What the engine reports when a resource cannot be applied (the lifecycle of applied resources is in
// reconciler.test.ts): Failed and its backoff, DependencyFailed along dependsOn, and Waiting for material.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../api/meta/clock.ts';
import { FakeClock } from '../../api/meta/fake-clock.ts';
import type { DeclaredResource } from '../../api/v1alpha1/generated/declaration.ts';
import { engineSetup } from './engine-testing.ts';
import { memoryLogger } from './testing.ts';

test('engine: a failing resource fails the resources that depend on it, other owners go on, and it backs off', async () => {
  let now = 1_000_000;
  const clock: Clock = {
    now: () => now,
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  };
  const t = engineSetup(clock);
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
  const t = engineSetup();
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

test('engine: a File whose certificate is not held yet is Waiting (not written, logged at info, not backed off), so are its dependents; it applies once the content is there', async () => {
  const logger = memoryLogger();
  const t = engineSetup(new FakeClock(), logger);
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
