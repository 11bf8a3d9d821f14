// Builds the shipped binaries into dist/ with esbuild, so that they start without tsx. They are CommonJS
// bundles (dist/package.json says so): Node loads CommonJS a few milliseconds faster than an ES module,
// which matters for meshctl's start-up. Dependencies stay in node_modules and are required where they are
// used, so a command that does not need one (e.g. `meshctl get` and the certificate library) never loads it.
import { build } from 'esbuild';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { resolve } from 'node:path';
import { writeCodeCache } from './code-cache.mjs';
import { buildWebPage } from './web-build.mjs';

const entries = {
  // A launcher that runs dist/meshctl-cli.js (cli/main.ts) from V8's code cache: cli/launcher.ts, code-cache.mjs.
  meshctl: 'cli/launcher.ts',
  'mesh-control-plane': 'controllers/main.ts',
  'mesh-agent': 'agent/main.ts',
};
/** Commands of meshctl that are built apart and required only when run (`meshctl init` brings the store and PKI). */
const cliSplits = {
  './init.ts': 'meshctl-init',
  './backup-offline.ts': 'meshctl-backup-offline',
  // Its `import()` must run under Node's own loader, not in the cached bundle's vm.Script (cli/esm-import.ts).
  './esm-import.ts': 'meshctl-esm-import',
};

/**
 * Start-up flags per binary: the agent caps V8's young generation, which otherwise grows to 2 × 16 MiB, and asks
 * V8 to favour size over speed (steady-state RSS 81 → 68 MiB, a no-op reconcile ~10 % slower: bench/RESULTS.md §6).
 * The control plane caps V8's old space at 1 GiB (Node's documented `--max-old-space-size`): below V8's 2 GiB
 * threshold it lets the heap grow at most ~1.6× the live objects between full collections instead of 4×, which
 * was most of the control plane's peak RSS during a change to every node (README, "The control plane's memory").
 * It raises the young generation's semi-spaces from 16 to 64 MiB: a scavenge every 4× as many allocated bytes, so
 * fewer of a request's short-lived objects outlive one and are promoted (bench/RESULTS.md §9).
 * It turns off V8's memory reducer, the full collections V8 starts on its own once the process allocates little (a
 * mesh's quiet minutes: heartbeats only) to give memory back. Those collections also let go of the object shapes
 * (maps) that optimized code checks for, and with them the optimized code of some 30 functions of the request and
 * write path ("weak objects" in `--trace-deopt`): the next change ran them unoptimized until V8 had compiled them
 * again (README, "The control plane's memory"; bench/RESULTS.md §9).
 * hack/local-mesh.mjs starts agents and the control plane with the same flags (AGENT_NODE_FLAGS,
 * CONTROL_PLANE_NODE_FLAGS there), and so does the scale bench (test/control-plane-process.ts).
 */
const nodeFlags = {
  'mesh-agent': ' --max-semi-space-size=1 --optimize-for-size',
  'mesh-control-plane': ' --max-old-space-size=1024 --max-semi-space-size=64 --no-memory-reducer',
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'linked',
  logLevel: 'warning',
  define: { 'import.meta.url': '__import_meta_url' },
  packages: 'external',
};
/**
 * `import.meta.url` in a CommonJS bundle: `file://` and the path when the path holds only characters a file URL
 * keeps as they are (Node's loader gives it absolute and normalized), else node:url's pathToFileURL (which costs
 * meshctl a URL parse at every start: bench/RESULTS.md §3).
 */
const IMPORT_META_URL =
  "const __import_meta_url = /^[\\w./-]+$/.test(__filename) ? 'file://' + __filename : require('node:url').pathToFileURL(__filename).href;";
/** meshctl's: Node 20 reads NODE_EXTRA_CA_CERTS at every start, whether or not a script needs it (cli/extra-ca.ts). */
const MESHCTL_SHEBANG = '#!/usr/bin/env -S -u NODE_EXTRA_CA_CERTS MESHCTL_EXTRA_CA_CERTS=${NODE_EXTRA_CA_CERTS} node';
const banner = (name) => ({ js: `#!/usr/bin/env -S node${nodeFlags[name] ?? ''}\n${IMPORT_META_URL}` });

/** Leaves the split-off commands out of the meshctl bundle: `import('./init.ts')` (from any cli/ file) becomes `require('./meshctl-init.js')`. */
const splitPlugin = {
  name: 'split-cli-commands',
  setup(b) {
    b.onResolve({ filter: /^\.\/[\w-]+\.ts$/ }, (args) => {
      const out = /[\\/]cli[\\/][\w-]+\.ts$/.test(args.importer) ? cliSplits[args.path] : undefined;
      return out ? { path: `./${out}.js`, external: true } : undefined;
    });
  },
};

const built = Object.entries(entries).filter(([, src]) => existsSync(src));
for (const [name, src] of built) {
  // The launcher uses no import.meta (nor the URL module the banner would call for it), and starts Node without
  // NODE_EXTRA_CA_CERTS, handing it over in MESHCTL_EXTRA_CA_CERTS (cli/extra-ca.ts): GNU env expands ${...} in -S.
  const bannerOf = name === 'meshctl' ? { js: MESHCTL_SHEBANG } : banner(name);
  await build({ ...common, entryPoints: { [name]: src }, outdir: 'dist', banner: bannerOf });
}
/**
 * In the meshctl bundle, `createRequire(import.meta.url)` is the bundle's own `require` (the launcher's, which
 * resolves from the same directory), so that a run never loads `node:module`; any other URL goes to the real one.
 */
const moduleShimPlugin = {
  name: 'meshctl-create-require',
  setup(b) {
    b.onResolve({ filter: /^node:module$/ }, (args) =>
      args.namespace === 'meshctl-module-shim'
        ? { path: 'node:module', external: true }
        : { path: 'node:module', namespace: 'meshctl-module-shim' },
    );
    b.onLoad({ filter: /.*/, namespace: 'meshctl-module-shim' }, () => ({
      contents:
        'export const createRequire = (url) => url === __import_meta_url ? require : require("node:module").createRequire(url);',
      loader: 'js',
    }));
  },
};

/**
 * Warns when the meshctl bundle holds a character outside ASCII: V8 then keeps the whole source as a two-byte
 * string, and reading, hashing and lazily compiling it cost every run more (esbuild escapes strings, not the
 * characters of a regular expression). test/e2e/cli-code-cache.test.ts fails on it.
 */
function warnNonAscii(path) {
  const lines = readFileSync(path, 'utf8').split('\n');
  const at = lines.findIndex((l) => /[^\x00-\x7f]/.test(l));
  if (at >= 0)
    process.stderr.write(`build: warning: ${path}:${at + 1} is not ASCII (slower start): ${lines[at].trim()}\n`);
}

// meshctl itself, run by the launcher: its `import()`s become `require()` (none may remain: cli/launcher.ts).
if (existsSync('cli/main.ts')) {
  await build({
    ...common,
    entryPoints: { 'meshctl-cli': 'cli/main.ts' },
    outdir: 'dist',
    banner: { js: banner('meshctl-cli').js.replace(/^#!.*\n/, '') },
    supported: { 'dynamic-import': false },
    plugins: [splitPlugin, moduleShimPlugin],
  });
  warnNonAscii('dist/meshctl-cli.js');
}
for (const [src, name] of Object.entries(cliSplits)) {
  await build({ ...common, entryPoints: { [name]: `cli/${src.slice(2)}` }, outdir: 'dist', banner: banner(name) });
}
// The status pages (web/<name>/main.ts) → dist/web/<name>.js and .css, served by the programs (api/web/assets.ts).
// An absolute outdir: web-build.mjs works from the repository root, and dist/ is the one of the current directory.
// A tree without web/ builds none.
for (const name of (existsSync('web') ? readdirSync('web') : []).filter((d) => existsSync(`web/${d}/main.ts`))) {
  await buildWebPage(name, resolve('dist/web'));
}
writeFileSync('dist/package.json', JSON.stringify({ type: 'commonjs' }) + '\n');
if (existsSync('dist/meshctl-cli.js')) await writeCodeCache('dist');

// dist/bin/<name> → ../<name>.js, so `export PATH=$PWD/dist/bin:$PATH` gives the commands their real names.
mkdirSync('dist/bin', { recursive: true });
for (const [name] of built) {
  chmodSync(`dist/${name}.js`, 0o755);
  rmSync(`dist/bin/${name}`, { force: true });
  symlinkSync(`../${name}.js`, `dist/bin/${name}`);
}
