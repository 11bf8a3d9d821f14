import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeMeshconfig } from '../api/client/meshconfig.ts';
import { UsageError } from '../api/meta/usage-error.ts';
import { durationFlag, parseCommandLine } from './cli-args.ts';

test('cli: flags become agent options, with defaults', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-agent-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cfg = join(dir, 'mc');
  writeMeshconfig(cfg, { server: 'https://127.0.0.1:6443', token: 'tok' });
  const o = parseCommandLine([
    'run',
    '--state-dir',
    dir,
    '--name',
    'a',
    '--root',
    dir,
    '--config',
    cfg,
    '--site',
    'home',
    '--reconcile-interval',
    '500ms',
    '--heartbeat-interval',
    '1m',
    '--metrics-listen',
    '127.0.0.1:9100',
    '--stop-services-on-exit',
  ]);
  assert.deepEqual(o, {
    stateDir: dir,
    nodeName: 'a',
    root: dir,
    site: 'home',
    connection: { server: 'https://127.0.0.1:6443', token: 'tok' },
    reconcileIntervalMs: 500,
    heartbeatIntervalMs: 60_000,
    metricsListen: '127.0.0.1:9100',
    stopServicesOnExit: true,
  });
  assert.deepEqual(parseCommandLine(['run', '--state-dir', dir]), {
    stateDir: dir,
    reconcileIntervalMs: 5000,
    heartbeatIntervalMs: 10_000,
    metricsListen: '127.0.0.1:0',
    stopServicesOnExit: false,
  });
  assert.equal(parseCommandLine(['--help']), 'help');
});

test('cli: bad command lines are usage errors that say what is wrong', () => {
  const bad: Array<[string[], RegExp]> = [
    [['run'], /--state-dir is required/],
    [['run', '--state-dir', 'x', '--root', '/no/such/root'], /^--root \/no\/such\/root does not exist: /],
    [[], /missing command/],
    [['start', '--state-dir', 'x'], /unknown command "start"/],
    [['run', '--state-dir', 'x', '--bogus'], /Unknown option '--bogus'/],
    [['run', '--state-dir', 'x', '--reconcile-interval', '5'], /--reconcile-interval must be a duration/],
    [['run', '--state-dir', 'x', '--metrics-listen', 'nope'], /--metrics-listen: expected HOST:PORT/],
    [['run', '--state-dir', 'x', '--config', '/nonexistent/mc'], /--config: cannot read meshconfig \/nonexistent\/mc/],
  ];
  for (const [argv, msg] of bad)
    assert.throws(
      () => parseCommandLine(argv),
      (e: Error) => e instanceof UsageError && msg.test(e.message),
      argv.join(' '),
    );
  assert.equal(durationFlag('x', '1.5s'), 1500);
  assert.equal(durationFlag('x', '2h'), 7_200_000);
  assert.equal(durationFlag('x', '1m30s'), 90_000);
});
