import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsyncDir, fsyncDirSync, writeFileAtomic, writeFileAtomicSync } from './atomic-file.ts';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-atomic-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('writeFileAtomic replaces the file with exactly the mode asked, leaving no temporary file', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'secret');
  writeFileSync(path, 'old', { mode: 0o644 });
  const umask = process.umask(0o077);
  try {
    await writeFileAtomic(path, 'new', { mode: 0o640 });
  } finally {
    process.umask(umask);
  }
  assert.equal(readFileSync(path, 'utf8'), 'new');
  assert.equal(statSync(path).mode & 0o777, 0o640);
  await writeFileAtomic(path, new Uint8Array([104, 105]), { mode: 0o600 });
  assert.equal(readFileSync(path, 'utf8'), 'hi');
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(dir), ['secret']);
});

test('writeFileAtomicSync does the same synchronously', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'ca.crt');
  writeFileAtomicSync(path, 'pem', { mode: 0o644 });
  writeFileAtomicSync(path, 'pem2', { mode: 0o644 });
  assert.equal(readFileSync(path, 'utf8'), 'pem2');
  assert.equal(statSync(path).mode & 0o777, 0o644);
  assert.deepEqual(readdirSync(dir), ['ca.crt']);
});

test('a failed write leaves the old file and no temporary file', async (t) => {
  const dir = tempDir(t);
  await assert.rejects(writeFileAtomic(join(dir, 'missing', 'f'), 'x', { mode: 0o600 }), /ENOENT/);
  assert.throws(() => writeFileAtomicSync(join(dir, 'missing', 'f'), 'x', { mode: 0o600 }), /ENOENT/);
  const path = join(dir, 'd');
  mkdirSync(path);
  writeFileSync(join(path, 'old'), 'old');
  await assert.rejects(writeFileAtomic(path, 'x', { mode: 0o600 }), /EISDIR|ENOTEMPTY|EEXIST/);
  assert.deepEqual(readdirSync(dir), ['d']);
  assert.equal(readFileSync(join(path, 'old'), 'utf8'), 'old');
});

test('fsyncDir syncs a directory and fails on a missing one', async (t) => {
  const dir = tempDir(t);
  await fsyncDir(dir);
  fsyncDirSync(dir);
  await assert.rejects(fsyncDir(join(dir, 'nope')), /ENOENT/);
});
