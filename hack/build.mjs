// Builds the shipped binaries into dist/ with esbuild, so that they start without tsx.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

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
