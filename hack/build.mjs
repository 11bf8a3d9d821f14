// Builds the shipped binaries into dist/ with esbuild, so that they start without tsx. They are CommonJS
// bundles (dist/package.json says so): Node loads CommonJS a few milliseconds faster than an ES module,
// which matters for meshctl's start-up. `yaml` is required from node_modules at run time, when needed.
import { build } from 'esbuild';
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';

const entries = {
  'meshctl': 'cli/main.ts',
  'mesh-control-plane': 'controllers/main.ts',
  'mesh-agent': 'agent/main.ts',
};

const entryPoints = Object.fromEntries(Object.entries(entries).filter(([, src]) => existsSync(src)));

await build({
  entryPoints,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'linked',
  logLevel: 'warning',
  define: { 'import.meta.url': '__import_meta_url' },
  banner: { js: "#!/usr/bin/env node\nconst __import_meta_url = require('node:url').pathToFileURL(__filename).href;" },
  external: ['better-sqlite3', 'yaml'],
});
writeFileSync('dist/package.json', JSON.stringify({ type: 'commonjs' }) + '\n');

// dist/bin/<name> → ../<name>.js, so `export PATH=$PWD/dist/bin:$PATH` gives the commands their real names.
mkdirSync('dist/bin', { recursive: true });
for (const name of Object.keys(entryPoints)) {
  chmodSync(`dist/${name}.js`, 0o755);
  rmSync(`dist/bin/${name}`, { force: true });
  symlinkSync(`../${name}.js`, `dist/bin/${name}`);
}
