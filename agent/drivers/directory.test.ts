import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { directoryDriver } from './directory.ts';
import { tempHost } from '../engine/testing.ts';

const rctx = (h: ReturnType<typeof tempHost>) => ({ ...h.ctx, id: 'd', owner: 'x' });

test('Directory: mkdir -p with mode, then in sync; mode drift is corrected', async () => {
  const h = tempHost();
  try {
    const spec = { path: '/srv/app/data', mode: '0750' };
    const o = await directoryDriver.observe(spec, rctx(h));
    assert.equal(o.exists, false);
    await directoryDriver.apply(spec, rctx(h), o);
    const p = join(h.root, 'srv/app/data');
    assert.equal(statSync(p).mode & 0o7777, 0o750);
    assert.deepEqual(directoryDriver.diff(spec, await directoryDriver.observe(spec, rctx(h))), []);
    const { chmodSync } = await import('node:fs');
    chmodSync(p, 0o777);
    const drift = await directoryDriver.observe(spec, rctx(h));
    assert.deepEqual(
      directoryDriver.diff(spec, drift).map((c) => c.field),
      ['mode'],
    );
    await directoryDriver.apply(spec, rctx(h), drift);
    assert.equal(statSync(p).mode & 0o7777, 0o750);
  } finally {
    h.cleanup();
  }
});

test('Directory: removal leaves a non-empty directory and its content alone, and reports it', async () => {
  const h = tempHost();
  try {
    const spec = { path: '/srv/app' };
    mkdirSync(join(h.root, 'srv/app'), { recursive: true });
    writeFileSync(join(h.root, 'srv/app/notes.txt'), 'not ours');
    const out = await directoryDriver.remove(spec, rctx(h));
    assert.equal(out?.retained, true);
    assert.match(out?.message ?? '', /not empty/);
    assert.equal(readFileSync(join(h.root, 'srv/app/notes.txt'), 'utf8'), 'not ours');
    const empty = { path: '/srv/empty' };
    mkdirSync(join(h.root, 'srv/empty'));
    assert.equal(await directoryDriver.remove(empty, rctx(h)), undefined);
    assert.equal(existsSync(join(h.root, 'srv/empty')), false);
    assert.equal(await directoryDriver.remove(empty, rctx(h)), undefined, 'absent is fine');
  } finally {
    h.cleanup();
  }
});

test('Directory: a file at the path is reported, not replaced', async () => {
  const h = tempHost();
  try {
    writeFileSync(join(h.root, 'thing'), 'x');
    const spec = { path: '/thing' };
    const o = await directoryDriver.observe(spec, rctx(h));
    assert.match(directoryDriver.diff(spec, o)[0]?.message ?? '', /is a file/);
    await assert.rejects(directoryDriver.apply(spec, rctx(h), o), /not a directory/);
    await assert.rejects(directoryDriver.observe({ path: '../x' }, rctx(h)), /must be absolute/);
  } finally {
    h.cleanup();
  }
});
