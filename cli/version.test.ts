// `meshctl --version` prints what `meshctl version --client` prints (it printed the help before; issue 8).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pkg from '../package.json' with { type: 'json' };

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

function meshctl(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.MESHCONFIG;
  return spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], {
    cwd: REPO_ROOT,
    env,
    encoding: 'utf8',
  });
}

test('meshctl --version prints the client version, as version --client does, with no meshconfig', () => {
  const flag = meshctl('--version');
  assert.equal(flag.status, 0, flag.stderr);
  assert.equal(flag.stdout, `Client Version: v${pkg.version}\n`);
  assert.equal(flag.stdout, meshctl('version', '--client').stdout);
  assert.match(meshctl('--help').stdout, /^ {2}--version +print the client version/m);
});
