import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../api/meta/usage-error.ts';
import { DEFAULT_STATE_DIR, parseJoinCommand } from './join-command.ts';
import { ensureNodeKey, nodeKeyPath } from './node-key.ts';
import { joinMesh } from './join.ts';
import { memoryLogger } from './engine/testing.ts';

const REQUIRED = [
  '--server',
  'https://10.0.0.1:6443',
  '--token',
  'abcdef.0123456789abcdef',
  '--ca-hash',
  `sha256:${'a'.repeat(64)}`,
];

test('join: flags become the join and the agent to run afterwards, with defaults', () => {
  const c = parseJoinCommand([
    ...REQUIRED,
    '--name',
    'n1',
    '--site',
    'home',
    '--state-dir',
    '/s',
    '--root',
    tmpdir(),
    '--heartbeat-interval',
    '1s',
  ]);
  assert.ok(c !== 'help');
  assert.deepEqual(
    { ...c, run: undefined },
    {
      server: 'https://10.0.0.1:6443',
      token: 'abcdef.0123456789abcdef',
      caHash: `sha256:${'a'.repeat(64)}`,
      nodeName: 'n1',
      site: 'home',
      stateDir: '/s',
      root: tmpdir(),
      run: undefined,
      runLine: 'mesh-agent run --state-dir /s --heartbeat-interval 1s --root /tmp',
    },
  );
  assert.equal(c.run?.stateDir, '/s');
  assert.equal(c.run?.heartbeatIntervalMs, 1000);
  assert.equal(c.run?.nodeName, undefined, 'the agent takes its identity from the store the join wrote');
  const d = parseJoinCommand([...REQUIRED, '--no-run']);
  assert.ok(d !== 'help');
  assert.equal(d.stateDir, DEFAULT_STATE_DIR);
  assert.equal(d.nodeName, hostname().toLowerCase());
  assert.equal(d.run, undefined);
  assert.equal(parseJoinCommand(['-h']), 'help');
});

test('join: bad command lines are usage errors', () => {
  const bad: Array<[string[], RegExp]> = [
    [[], /--server is required/],
    [[...REQUIRED, '--root', '/no/such/root'], /^--root \/no\/such\/root does not exist: /],
    [REQUIRED.slice(0, 4), /--ca-hash is required/],
    [[...REQUIRED, '--config', 'x'], /Unknown option '--config'/],
    [[...REQUIRED, 'extra'], /positional/],
    [[...REQUIRED, '--reconcile-interval', '5'], /--reconcile-interval must be a duration/],
  ];
  for (const [argv, msg] of bad)
    assert.throws(
      () => parseJoinCommand(argv),
      (e: Error) => e instanceof UsageError && msg.test(e.message),
      argv.join(' '),
    );
});

test('the node key is generated once, 0600, and reused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-node-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const state = join(dir, 'state');
  const first = await ensureNodeKey(state);
  assert.equal(first.created, true);
  assert.equal(statSync(nodeKeyPath(state)).mode & 0o777, 0o600);
  assert.match(readFileSync(nodeKeyPath(state), 'utf8'), /^-----BEGIN PRIVATE KEY-----/);
  const again = await ensureNodeKey(state);
  assert.deepEqual(again, { publicKey: first.publicKey, created: false });
});

test('join: a state directory it creates is 0700, as init makes it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-join-state-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const stateDir = join(dir, 'new', 'state');
  const joining = joinMesh({
    server: 'https://127.0.0.1:1',
    token: 'abcdef.0123456789abcdef',
    caHash: `sha256:${'a'.repeat(64)}`,
    nodeName: 'n1',
    stateDir,
    root: dir,
    logger: memoryLogger(),
    timeoutMs: 5000,
  });
  await assert.rejects(joining); // nothing listens there; the directory is made before the first request
  assert.equal(statSync(stateDir).mode & 0o777, 0o700);
});
