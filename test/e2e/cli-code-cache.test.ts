// The shipped meshctl runs from V8's code cache (cli/launcher.ts, hack/code-cache.mjs): the build writes the cache,
// V8 accepts it, the bundle holds no `import()` (which a cached vm.Script cannot run on Node 20) and only ASCII, a
// start loads no built-in module but node:vm beyond what Node loads for any file, and without the cache meshctl
// still runs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runInNewContext } from 'node:vm';
import { buildCli, type BuiltCli } from './cli-harness.ts';

/** A `--require` module that prints the built-in modules loaded by the time the process exits. */
const MODULES_PROBE = `process.on('exit', () => require('fs').writeSync(2,
  'modules=' + JSON.stringify(process.moduleLoadList) + '\\n'));\n`;

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

  it('is ASCII (one other character makes V8 hold the whole bundle as a two-byte string)', () => {
    const text = readFileSync(join(dirname(cli.bin), 'meshctl-cli.js'), 'utf8');
    const line = text.split('\n').findIndex((l) => /[^\x00-\x7f]/.test(l));
    assert.equal(line, -1, `line ${line + 1} is not ASCII`);
  });

  it("gives import.meta.url as node:url's pathToFileURL would, without calling it for a plain path", () => {
    const line = readFileSync(join(dirname(cli.bin), 'meshctl-cli.js'), 'utf8').split('\n')[0];
    const paths = ['/opt/meshctl/dist/meshctl-cli.js', '/tmp/a b/#1%/x.js', '/tmp/\u00e9t\u00e9/x?.js', '/t/a\\b.js'];
    for (const path of paths) {
      let loaded = false;
      const req = (id: string): unknown => ((loaded = true), createRequire(import.meta.url)(id));
      const url = runInNewContext(`${line}; __import_meta_url`, { __filename: path, require: req }) as string;
      assert.equal(url, pathToFileURL(path).href, path);
      assert.equal(loaded, path !== paths[0], `node:url loaded for ${path}`);
    }
  });

  it('loads no built-in module at start-up beyond node:vm: `--help` against a file that does nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meshctl-modules-'));
    try {
      const probe = join(dir, 'probe.cjs');
      writeFileSync(probe, MODULES_PROBE);
      writeFileSync(join(dir, 'empty.cjs'), '');
      const loaded = (args: string[]): string[] => {
        const r = spawnSync(process.execPath, ['--require', probe, ...args], { encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
        return JSON.parse(/^modules=(.*)$/m.exec(r.stderr)?.[1] ?? '[]') as string[];
      };
      const bare = new Set(loaded([join(dir, 'empty.cjs')]));
      assert.deepEqual(
        loaded([cli.bin, '--help']).filter((m) => !bare.has(m)),
        ['NativeModule vm'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs without the cache, compiling as usual, and says so under MESHCTL_DEBUG', () => {
    rmSync(join(dirname(cli.bin), 'meshctl-cli.js.cache'));
    const r = runDebug(cli.bin, ['--help']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^meshctl controls a mesh/);
    assert.match(r.stderr, /compiled without the code cache/);
  });
});
