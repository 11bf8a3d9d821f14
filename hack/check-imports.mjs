// Checks the dependency direction: api/ imports none of controllers/, agent/, cli/, web/; those never import each other.
// Inside api/: api/meta imports nothing else of ours (only itself and packages); api/client never imports api/server.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const layers = ['api', 'controllers', 'agent', 'cli', 'web'];
const allowed = {
  api: ['api'],
  controllers: ['api', 'controllers'],
  agent: ['api', 'agent'],
  cli: ['api', 'cli'],
  web: ['api', 'web'],
};
/** Folders with a stricter rule than their layer: the only folders of ours they may import, or those they must not. */
const folderRules = [
  { dir: 'api/meta', only: ['api/meta'] },
  { dir: 'api/client', not: ['api/server'] },
  // The pages run in a browser: pure helpers and the resource types only.
  { dir: 'web', only: ['web', 'api/meta', 'api/v1alpha1'] },
];
const inside = (path, dir) => path === dir || path.startsWith(dir + '/');
const bad = [];
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (/\.(ts|mts|js|mjs)$/.test(name)) check(p);
  }
}
function check(file) {
  const from = file.split('/')[0];
  const src = readFileSync(file, 'utf8');
  for (const m of src.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const path = relative('.', resolve(dirname(file), m[1]));
    const target = path.split('/')[0];
    if (layers.includes(target) && !allowed[from].includes(target)) {
      bad.push(`${file}: imports ${m[1]} (${from}/ must not import ${target}/)`);
    }
    for (const r of folderRules.filter((r) => inside(file, r.dir))) {
      const ours = !path.startsWith('..');
      if (r.only && ours && !r.only.some((d) => inside(path, d))) {
        bad.push(`${file}: imports ${m[1]} (${r.dir}/ imports only ${r.only.join(', ')}/ of ours, and packages)`);
      }
      const denied = r.not?.find((d) => inside(path, d));
      if (denied) bad.push(`${file}: imports ${m[1]} (${r.dir}/ must not import ${denied}/)`);
    }
  }
}
for (const l of layers) walk(l);
if (bad.length) {
  console.error('Import direction violated:\n' + bad.join('\n'));
  process.exit(1);
}
