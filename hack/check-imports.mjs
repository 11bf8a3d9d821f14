// Checks the dependency direction: api/ imports none of controllers/, agent/, cli/; those never import each other.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const layers = ['api', 'controllers', 'agent', 'cli'];
const allowed = {
  api: ['api'],
  controllers: ['api', 'controllers'],
  agent: ['api', 'agent'],
  cli: ['api', 'cli'],
};
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
    const target = relative('.', resolve(dirname(file), m[1])).split('/')[0];
    if (layers.includes(target) && !allowed[from].includes(target)) {
      bad.push(`${file}: imports ${m[1]} (${from}/ must not import ${target}/)`);
    }
  }
}
for (const l of layers) walk(l);
if (bad.length) {
  console.error('Import direction violated:\n' + bad.join('\n'));
  process.exit(1);
}
