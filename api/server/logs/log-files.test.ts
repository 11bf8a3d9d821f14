import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogFiles } from './log-files.ts';
import { CURSOR_FILE } from './log-cursors.ts';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-logfiles-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const line = (seq: number, service = 'web') => ({
  seq,
  service,
  time: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z`,
  line: `line ${seq}`,
});
const lines = (...seqs: number[]) => seqs.map((s) => line(s));
const text = (files: LogFiles, service = 'web') => files.read('a', service).then((s) => s.replace(/^\S* /gm, ''));

test('a batch re-sent after a restart (the first process was killed before replying) is stored once', async (t) => {
  const dir = tempDir(t);
  const first = new LogFiles({ dir });
  assert.deepEqual(await first.append('a', { stream: 's1', entries: lines(1, 2) }), { accepted: 2, duplicates: 0 });
  // No close(): as after a SIGKILL, the second process finds only what the first one wrote before its reply.
  const second = new LogFiles({ dir });
  t.after(() => (first.close(), second.close()));
  assert.deepEqual(await second.append('a', { stream: 's1', entries: lines(2, 3) }), { accepted: 1, duplicates: 1 });
  assert.equal(await text(second), 'line 1\nline 2\nline 3\n');
  assert.deepEqual(await second.append('a', { stream: 's2', entries: lines(1) }), { accepted: 1, duplicates: 0 });
});

test('a torn last cursor line falls back to the line before it; a cursor.json of earlier versions is read', async (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'a'));
  writeFileSync(join(dir, 'a', CURSOR_FILE), '{"stream":"s1","seq":2}\n{"stream":"s1","seq":9');
  const files = new LogFiles({ dir });
  t.after(() => files.close());
  assert.deepEqual(await files.append('a', { stream: 's1', entries: lines(2, 3) }), { accepted: 1, duplicates: 1 });

  mkdirSync(join(dir, 'b'));
  writeFileSync(join(dir, 'b', 'cursor.json'), '{"stream":"s1","seq":5}\n');
  assert.deepEqual(await files.append('b', { stream: 's1', entries: lines(5, 6) }), { accepted: 1, duplicates: 1 });
});

test('the cursor file is compacted to its last line when it passes its cap, and still dedupes after a restart', async (t) => {
  const dir = tempDir(t);
  const files = new LogFiles({ dir, maxCursorBytes: 100 });
  t.after(() => files.close());
  for (let i = 1; i <= 20; i++) await files.append('a', { stream: 's1', entries: lines(i) });
  const cursorPath = join(dir, 'a', CURSOR_FILE);
  assert.ok(statSync(cursorPath).size <= 100, `compacted: ${readFileSync(cursorPath, 'utf8')}`);
  await files.append('a', { stream: 's1', entries: lines(21) });
  const again = new LogFiles({ dir });
  t.after(() => again.close());
  assert.deepEqual(await again.append('a', { stream: 's1', entries: lines(21, 22) }), { accepted: 1, duplicates: 1 });
  assert.equal((await text(again)).split('\n').length - 1, 22, 'every line once');
});

test('files stay open between POSTs up to maxOpenFiles, least recently used closed first; lines land in order', async (t) => {
  const dir = tempDir(t);
  const files = new LogFiles({ dir, maxOpenFiles: 3 });
  t.after(() => files.close());
  const services = ['s0', 's1', 's2', 's3', 's4'];
  for (let round = 0; round < 3; round++) {
    const entries = services.map((service, i) => line(round * services.length + i + 1, service));
    await files.append('a', { stream: 'x', entries });
    assert.equal(files.openFiles(), 3, `round ${round}: bounded`);
  }
  for (const [i, service] of services.entries()) {
    const want = [0, 1, 2].map((round) => `line ${round * services.length + i + 1}\n`).join('');
    assert.equal(await text(files, service), want, service);
  }
  const one = new LogFiles({ dir: join(dir, 'other') });
  t.after(() => one.close());
  for (let i = 1; i <= 5; i++) await one.append('n', { stream: 'y', entries: [line(i)] });
  assert.equal(one.openFiles(), 2, 'one service file and the cursor, kept open across POSTs');
  files.close();
  assert.equal(files.openFiles(), 0);
});

test('a rotated file is not written through a descriptor kept from before the rotation', async (t) => {
  const dir = tempDir(t);
  const files = new LogFiles({ dir, maxFileBytes: 50 });
  t.after(() => files.close());
  for (let i = 1; i <= 4; i++) await files.append('a', { entries: lines(i) });
  const path = files.path('a', 'web');
  assert.ok(existsSync(`${path}.1`));
  assert.equal(readFileSync(path, 'utf8'), '2026-01-01T00:00:04Z line 4\n');
  assert.equal(readFileSync(`${path}.1`, 'utf8'), '2026-01-01T00:00:03Z line 3\n');
});

test('a file closed to make room keeps its size as written: it still rotates at the cap', async (t) => {
  const dir = tempDir(t);
  // One descriptor for a service's file and the cursor: each append closes the other, and the next reopens it.
  const files = new LogFiles({ dir, maxOpenFiles: 1, maxFileBytes: 100 });
  t.after(() => files.close());
  for (let i = 1; i <= 10; i++) await files.append('a', { stream: 's', entries: lines(i) });
  const path = files.path('a', 'web');
  const rotated = readFileSync(`${path}.1`, 'utf8');
  const current = readFileSync(path, 'utf8');
  assert.ok(statSync(path).size <= 100 && statSync(`${path}.1`).size <= 100, `${rotated}---\n${current}`);
  assert.equal(current.split('\n').length - 1, 1, 'line 10 alone: 7 to 9 filled the file rotated before it');
  assert.equal(files.openFiles(), 1);
});
