// The shipped meshctl runs from V8's code cache (cli/launcher.ts, hack/code-cache.mjs): the build writes the cache,
// V8 accepts it, the bundle holds no `import()` (which a cached vm.Script cannot run on Node 20), and without the
// cache meshctl still runs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildCli, type BuiltCli } from './cli-harness.ts';

/** Runs the built launcher with MESHCTL_DEBUG=1 (it then says when it compiled without the cache). */
function runDebug(bin: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, MESHCTL_DEBUG: '1' };
  delete env.NODE_OPTIONS;
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env });
}

describe('meshctl code cache', () => {
  let cli: BuiltCli;
  before(async () => {
    cli = await buildCli();
  });
  after(() => cli?.cleanup());

  it('is written by the build and accepted by V8', () => {
    const cache = join(dirname(cli.bin), 'meshctl-cli.js.cache');
    assert.ok(existsSync(cache), `${cache} exists`);
    const r = runDebug(cli.bin, ['--help']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^meshctl controls a mesh/);
    assert.doesNotMatch(r.stderr, /without the code cache/);
  });

  it('leaves no import() in the cached bundle', () => {
    const text = readFileSync(join(dirname(cli.bin), 'meshctl-cli.js'), 'utf8');
    assert.doesNotMatch(text, /(?<![\w$.])import\(/);
  });

  it('runs without the cache, compiling as usual, and says so under MESHCTL_DEBUG', () => {
    rmSync(join(dirname(cli.bin), 'meshctl-cli.js.cache'));
    const r = runDebug(cli.bin, ['--help']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^meshctl controls a mesh/);
    assert.match(r.stderr, /compiled without the code cache/);
  });
});
