/**
 * `dist/meshctl.js`: runs the meshctl bundle (`dist/meshctl-cli.js`, built from main.ts) from V8's code cache
 * (`dist/meshctl-cli.js.cache`, written by hack/build.mjs after one `get` run: hack/code-cache.mjs), so that a run
 * neither parses the bundle nor compiles the functions `get` needs again (bench/RESULTS.md §3). Node 20 has no
 * compile cache for CommonJS of its own (module.enableCompileCache came in Node 22). Without the cache file, or when
 * V8 refuses it (another Node version or other V8 flags), the bundle is compiled as usual: only slower.
 * The bundle must not call `import()` (a vm.Script from a code cache has no loader for it in Node 20): the build
 * turns its dynamic imports into `require()`, and ES-only packages are imported through esm-import.ts.
 * With `MESHCTL_WRITE_CODE_CACHE=1` the run writes the cache when it exits (the build's own run does); with
 * `MESHCTL_DEBUG=1` it says on stderr when it ran without the cache.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Module, createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/** What Module.wrap makes of the bundle: CommonJS's function of (exports, require, module, __filename, __dirname). */
type ModuleWrapper = (exports: unknown, req: NodeJS.Require, mod: Module, filename: string, dir: string) => void;

const dir = dirname(fileURLToPath(import.meta.url));
const bundle = join(dir, 'meshctl-cli.js');
const cachePath = `${bundle}.cache`;

/** The cache file's bytes, or undefined when there is none (a build without it still runs). */
function readCache(): Buffer | undefined {
  try {
    return readFileSync(cachePath);
  } catch {
    return undefined;
  }
}

const script = new Script(Module.wrap(readFileSync(bundle, 'utf8')), { filename: bundle, cachedData: readCache() });
if (process.env.MESHCTL_WRITE_CODE_CACHE === '1') {
  // At exit, the functions this run compiled are in the cache too.
  process.once('exit', () => {
    writeFileSync(`${cachePath}.tmp`, script.createCachedData());
    renameSync(`${cachePath}.tmp`, cachePath);
  });
}
if (process.env.MESHCTL_DEBUG === '1' && script.cachedDataRejected !== false)
  process.stderr.write(`meshctl: compiled without the code cache (${cachePath} missing or refused by V8)\n`);
const mod = new Module(bundle);
mod.filename = bundle;
(script.runInThisContext() as ModuleWrapper)(mod.exports, createRequire(bundle), mod, bundle, dir);
