import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileDriver, type FileObserved } from './file.ts';
import { tempHost } from '../engine/testing.ts';
import { WaitingError } from '../engine/types.ts';
import type { FileSpec } from '../../api/v1alpha1/generated/host-resource.ts';

const rctx = (h: ReturnType<typeof tempHost>) => ({ ...h.ctx, id: 'f', owner: 'x' });

async function converge(h: ReturnType<typeof tempHost>, spec: FileSpec, last?: FileObserved): Promise<FileObserved> {
  const o = await fileDriver.observe(spec, rctx(h), last);
  if (fileDriver.diff(spec, o).length) await fileDriver.apply(spec, rctx(h), o);
  return fileDriver.observe(spec, rctx(h));
}

test('File: creates with content and mode, then is in sync', async () => {
  const h = tempHost();
  try {
    mkdirSync(join(h.root, 'etc'));
    const spec: FileSpec = { path: '/etc/app.conf', content: 'a=1\n', mode: '0640' };
    const before = await fileDriver.observe(spec, rctx(h));
    assert.deepEqual(
      fileDriver.diff(spec, before).map((c) => c.field),
      ['path'],
    );
    const after = await converge(h, spec);
    assert.equal(readFileSync(join(h.root, 'etc/app.conf'), 'utf8'), 'a=1\n');
    assert.equal(statSync(join(h.root, 'etc/app.conf')).mode & 0o7777, 0o640);
    assert.deepEqual(fileDriver.diff(spec, after), []);
  } finally {
    h.cleanup();
  }
});

test('File: replaces atomically (new inode, no temp files left) and fixes drift of content and mode', async () => {
  const h = tempHost();
  try {
    const p = join(h.root, 'app.conf');
    const spec: FileSpec = { path: '/app.conf', content: 'v1\n', mode: '0600' };
    const first = await converge(h, spec);
    const ino = statSync(p).ino;
    const v2: FileSpec = { ...spec, content: 'version two\n' };
    const o = await fileDriver.observe(v2, rctx(h));
    assert.equal(o.sha256, undefined, 'size differs: the content is not read');
    const vouched = await fileDriver.observe(v2, rctx(h), { ...first, sha256: 'recorded' });
    assert.equal(vouched.sha256, 'recorded', 'unchanged lstat facts: the recorded hash is trusted, nothing is read');
    assert.deepEqual(
      fileDriver.diff(v2, o).map((c) => c.field),
      ['content'],
    );
    await fileDriver.apply(v2, rctx(h), o);
    assert.equal(readFileSync(p, 'utf8'), 'version two\n');
    assert.notEqual(statSync(p).ino, ino, 'rename gave a new inode: readers never saw a partial file');
    assert.deepEqual(readdirSync(h.root), ['app.conf']);
    writeFileSync(p, 'version TWO\n');
    const { chmodSync } = await import('node:fs');
    chmodSync(p, 0o666);
    const drift = await fileDriver.observe(v2, rctx(h), first);
    assert.deepEqual(
      fileDriver.diff(v2, drift).map((c) => c.field),
      ['content', 'mode'],
    );
    await converge(h, v2);
    assert.equal(readFileSync(p, 'utf8'), 'version two\n');
    assert.equal(statSync(p).mode & 0o7777, 0o600);
  } finally {
    h.cleanup();
  }
});

test('File: fails clearly when the parent directory is missing or the path escapes the root, and waits for unheld material', async () => {
  const h = tempHost();
  try {
    const spec: FileSpec = { path: '/missing/app.conf', content: 'x' };
    await assert.rejects(
      fileDriver.apply(spec, rctx(h), await fileDriver.observe(spec, rctx(h))),
      /parent directory \/missing .*does not exist/,
    );
    symlinkSync(h.dir, join(h.root, 'up'));
    await assert.rejects(fileDriver.observe({ path: '/up/evil', content: 'x' }, rctx(h)), /outside the root/);
    await assert.rejects(
      fileDriver.observe({ path: '/c', contentFrom: { certificate: 'web', key: 'cert' } }, rctx(h)),
      (e) => e instanceof WaitingError && /waits for the cert of certificate "web"/.test(e.message),
    );
  } finally {
    h.cleanup();
  }
});

test('File: remove unlinks it and is idempotent', async () => {
  const h = tempHost();
  try {
    const spec: FileSpec = { path: '/a', content: 'x' };
    await converge(h, spec);
    await fileDriver.remove(spec, rctx(h));
    assert.deepEqual(readdirSync(h.root), []);
    await fileDriver.remove(spec, rctx(h));
  } finally {
    h.cleanup();
  }
});
