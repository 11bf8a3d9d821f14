/**
 * `npm install` on a fresh clone compiles no native module: nothing the lockfile installs by default runs a
 * build step, except esbuild, whose install script only picks its prebuilt binary from a registry package.
 * better-sqlite3 (a native module, used only by `npm run bench`) is an optional peer dependency, which npm
 * never installs on its own.
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

test('better-sqlite3 is an optional peer dependency, not one npm install adds', () => {
  const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as Record<
    string,
    Record<string, unknown> | undefined
  >;
  assert.equal(pkg.dependencies?.['better-sqlite3'], undefined);
  assert.equal(pkg.devDependencies?.['better-sqlite3'], undefined);
  assert.deepEqual(pkg.peerDependenciesMeta?.['better-sqlite3'], { optional: true });
});
