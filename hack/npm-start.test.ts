// `npm start` runs the checkout's code: it builds dist/ before it starts the local mesh from it, so a `git pull`
// (or any edit) is never run against the bundles of an older build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/repo-root.ts';

test('npm start builds dist/ and then runs the local mesh from it', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const steps = pkg.scripts.start.split('&&').map((s) => s.trim());
  assert.deepEqual(steps, ['node hack/build.mjs', 'node hack/local-mesh.mjs'], `npm start is "${pkg.scripts.start}"`);
  assert.equal(pkg.scripts.build, 'node hack/build.mjs', 'npm run build is the same build');
});
