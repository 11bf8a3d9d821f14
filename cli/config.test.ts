import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeMeshconfig } from '../api/client/meshconfig.ts';
import { findConfigPath, loadConfig } from './config.ts';
import { CliError } from './errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'meshctl-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const cwd = join(dir, 'work');
const home = join(dir, 'home');
mkdirSync(join(cwd, '.meshctl', 'control-plane'), { recursive: true });
mkdirSync(join(home, '.meshctl'), { recursive: true });

test('lookup order: --config, $MESHCONFIG, ./.meshctl/admin.meshconfig, ./.meshctl/control-plane/admin.meshconfig, ~/.meshctl/config', () => {
  const env = {};
  assert.equal(findConfigPath({ env, cwd, home }), undefined);
  writeMeshconfig(join(home, '.meshctl', 'config'), { server: 'https://home:1' });
  assert.equal(findConfigPath({ env, cwd, home }), join(home, '.meshctl', 'config'));
  writeMeshconfig(join(cwd, '.meshctl', 'control-plane', 'admin.meshconfig'), { server: 'https://cp:1' });
  assert.equal(findConfigPath({ env, cwd, home }), join(cwd, '.meshctl', 'control-plane', 'admin.meshconfig'));
  writeMeshconfig(join(cwd, '.meshctl', 'admin.meshconfig'), { server: 'https://local:1', token: 't' });
  assert.equal(findConfigPath({ env, cwd, home }), join(cwd, '.meshctl', 'admin.meshconfig'));
  assert.equal(findConfigPath({ env: { MESHCONFIG: '/env/file' }, cwd, home }), '/env/file');
  assert.equal(findConfigPath({ flag: '/flag/file', env: { MESHCONFIG: '/env/file' }, cwd, home }), '/flag/file');
  assert.deepEqual(loadConfig({ env, cwd, home }), { server: 'https://local:1', token: 't' });
});

test('a missing or unreadable meshconfig is a CliError that says how to get one', () => {
  const empty = join(dir, 'empty');
  mkdirSync(empty);
  assert.throws(
    () => loadConfig({ env: {}, cwd: empty, home: empty }),
    (e) => e instanceof CliError && /no meshconfig found: pass --config FILE or set MESHCONFIG/.test(e.message),
  );
  assert.throws(
    () => loadConfig({ flag: join(dir, 'missing') }),
    (e) => e instanceof CliError && /cannot read meshconfig .*missing: no such file/.test(e.message),
  );
});

test('without a home given, ~/.meshctl/config is looked up in the home directory of $HOME', () => {
  const empty = join(dir, 'no-config-here');
  mkdirSync(empty, { recursive: true });
  const saved = process.env.HOME;
  process.env.HOME = home;
  try {
    writeMeshconfig(join(home, '.meshctl', 'config'), { server: 'https://home:1' });
    assert.equal(findConfigPath({ env: {}, cwd: empty }), join(home, '.meshctl', 'config'));
  } finally {
    process.env.HOME = saved;
  }
});
