// Builds the shipped binaries into dist/ with esbuild, so that they start without tsx.
import { build } from 'esbuild';
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';

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
  format: 'esm',
  sourcemap: 'linked',
  logLevel: 'warning',
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
  external: ['better-sqlite3'],
});

// dist/bin/<name> → ../<name>.js, so `export PATH=$PWD/dist/bin:$PATH` gives the commands their real names.
mkdirSync('dist/bin', { recursive: true });
for (const name of Object.keys(entryPoints)) {
  chmodSync(`dist/${name}.js`, 0o755);
  rmSync(`dist/bin/${name}`, { force: true });
  symlinkSync(`../${name}.js`, `dist/bin/${name}`);
}
