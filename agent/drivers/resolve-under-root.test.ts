import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { joinUnderRoot, resolveUnderRoot, PathEscapesRootError } from './resolve-under-root.ts';
import { tempHost } from '../engine/testing.ts';

test('absolute paths resolve under the root', async () => {
  const h = tempHost();
  try {
    assert.equal(await resolveUnderRoot(h.root, '/etc/app/config'), join(h.root, 'etc/app/config'));
    assert.equal(await resolveUnderRoot(h.root, '/'), h.root);
    assert.equal(joinUnderRoot('/', '/etc/x'), '/etc/x');
  } finally {
    h.cleanup();
  }
});

test('relative paths, .. segments and NUL bytes are rejected with a clear error', async () => {
  const h = tempHost();
  try {
    await assert.rejects(
      resolveUnderRoot(h.root, '../x'),
      (e: Error) => e instanceof PathEscapesRootError && /must be absolute/.test(e.message),
    );
    await assert.rejects(resolveUnderRoot(h.root, '/etc/../../x'), /contains a '\.\.' segment/);
    await assert.rejects(resolveUnderRoot(h.root, 'etc/x'), /must be absolute/);
    await assert.rejects(resolveUnderRoot(h.root, '/etc/\0x'), /NUL/);
  } finally {
    h.cleanup();
  }
});

test('a symlink in a parent that points outside the root is rejected', async () => {
  const h = tempHost();
  try {
    const outside = join(h.dir, 'outside');
    mkdirSync(outside);
    symlinkSync(outside, join(h.root, 'escape'));
    await assert.rejects(resolveUnderRoot(h.root, '/escape/passwd'), /outside the root/);
    await assert.rejects(resolveUnderRoot(h.root, '/escape/not/yet/created'), /outside the root/);
    mkdirSync(join(h.root, 'inside'));
    symlinkSync(join(h.root, 'inside'), join(h.root, 'link-in'));
    assert.equal(await resolveUnderRoot(h.root, '/link-in/x'), join(h.root, 'link-in/x'));
  } finally {
    h.cleanup();
  }
});

test('a root that does not exist, or no longer exists, is named in the error', async () => {
  const h = tempHost();
  try {
    const gone = join(h.dir, 'never');
    await assert.rejects(resolveUnderRoot(gone, '/etc/x'), {
      message: `the agent's root ${gone} (its --root) does not exist`,
    });
    assert.equal(await resolveUnderRoot(h.root, '/etc/x'), join(h.root, 'etc/x'));
    rmSync(h.root, { recursive: true });
    await assert.rejects(resolveUnderRoot(h.root, '/etc/x'), {
      message: `the agent's root ${h.root} (its --root) does not exist`,
    });
  } finally {
    h.cleanup();
  }
});
