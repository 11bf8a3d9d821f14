// Checks that no production TypeScript switches type checking off with `as unknown as`: type the boundary
// instead. Test files (*.test.ts) and generated code are exempt; any other occurrence fails, listed as file:line.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['api', 'controllers', 'agent', 'cli', 'hack', 'test', 'bench'];
const CAST = /\bas\s+unknown\s+as\b/;
const found = [];
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'generated' && name !== 'node_modules') walk(p);
    } else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) {
      readFileSync(p, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (CAST.test(line)) found.push(`${p}:${i + 1}: ${line.trim()}`);
        });
    }
  }
}
for (const r of roots) walk(r);
if (found.length) {
  console.error(`'as unknown as' turns type checking off; type the boundary instead:\n${found.join('\n')}`);
  process.exit(1);
}
