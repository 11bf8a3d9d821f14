/**
 * `npm install` on a fresh clone compiles no native module: nothing the lockfile installs by default runs a
 * build step, except esbuild, whose install script only picks its prebuilt binary from a registry package.
 * better-sqlite3 (a native module, used only by `npm run bench` as a point of comparison) is no dependency of
 * any kind: the bench says how to add it (`npm install --no-save better-sqlite3@12`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Packages whose install script is known to download nothing and compile nothing. */
const PREBUILT_ONLY = new Set(['node_modules/esbuild']);

interface LockPackage {
  hasInstallScript?: boolean;
  optional?: boolean;
  peer?: boolean;
}

test('no package that npm install fetches runs an install script, bar the prebuilt-binary picker esbuild', () => {
  const lock = JSON.parse(readFileSync(`${ROOT}/package-lock.json`, 'utf8')) as {
    packages: Record<string, LockPackage>;
  };
  const scripted = Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && p.hasInstallScript && !PREBUILT_ONLY.has(path))
    .map(([path]) => path);
  assert.deepEqual(scripted, []);
});

test('better-sqlite3 is in no dependency list, so npm install never adds (or compiles) it', () => {
  const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as Record<string, unknown>;
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    const deps = (pkg[field] ?? {}) as Record<string, unknown>;
    assert.equal(deps['better-sqlite3'], undefined, `${field} names better-sqlite3`);
  }
});
