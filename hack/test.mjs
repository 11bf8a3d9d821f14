// Runs every *.test.ts under the project with node:test (through tsx), e2e last.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const skip = new Set(['node_modules', 'dist', '.git', '.meshctl', 'bench']);
function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (skip.has(name)) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}
const only = process.argv.slice(2);
const files = only.length
  ? only
  : find('.').sort((a, b) => Number(a.includes('e2e')) - Number(b.includes('e2e')) || a.localeCompare(b));
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=180000', ...files],
  {
    stdio: 'inherit',
    env: { ...process.env, MESHCTL_TEST: '1' },
  },
);
process.exit(r.status ?? 1);
