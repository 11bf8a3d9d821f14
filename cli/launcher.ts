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
 *
 * Built as CommonJS, it runs with this file's own `require`, `module` and `__dirname` (the bundle sits beside it, so
 * the bundle resolves what it requires from the same directory): `node:module` and `node:url` stay unloaded, one
 * built-in module less to load at every start (`node:vm` is the only one Node does not load anyway).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Script } from 'node:vm';

/** CommonJS's module function of (exports, require, module, __filename, __dirname), which the bundle is run as. */
type ModuleWrapper = (exports: unknown, req: NodeJS.Require, mod: NodeJS.Module, filename: string, dir: string) => void;

const bundle = `${__dirname}/meshctl-cli.js`;
const cachePath = `${bundle}.cache`;

/** The cache file's bytes, or undefined when there is none (a build without it still runs). */
function readCache(): Buffer | undefined {
  try {
    return readFileSync(cachePath);
  } catch {
    return undefined;
  }
}

// What Module.wrap makes of a file (its two lines: the bundle's line numbers stay those of the file).
const source = `(function (exports, require, module, __filename, __dirname) { ${readFileSync(bundle, 'utf8')}\n});`;
const script = new Script(source, { filename: bundle, cachedData: readCache() });
if (process.env.MESHCTL_WRITE_CODE_CACHE === '1') {
  // At exit, the functions this run compiled are in the cache too.
  process.once('exit', () => {
    writeFileSync(`${cachePath}.tmp`, script.createCachedData());
    renameSync(`${cachePath}.tmp`, cachePath);
  });
}
if (process.env.MESHCTL_DEBUG === '1' && script.cachedDataRejected !== false)
  process.stderr.write(`meshctl: compiled without the code cache (${cachePath} missing or refused by V8)\n`);
// The bundle's own module object: a Module like the launcher's, for the file it was read from.
const mod = new (module.constructor as new (id: string) => NodeJS.Module)(bundle);
mod.filename = bundle;
(script.runInThisContext() as ModuleWrapper)(mod.exports, require, mod, bundle, __dirname);
