import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { busySpell, node, openAnyKindStore, settle, tempDir } from './testdata/helpers.ts';

const SEG1 = 'journal-0000000001.jsonl';

test('a reopened store holds everything, and resourceVersions continue', async (t) => {
  const dir = tempDir(t);
  const s1 = await openAnyKindStore({ dir });
  const a = await s1.create('nodes', node('a', { labels: { x: '1' } }));
  const b = await s1.create('nodes', node('b'));
  await s1.update('nodes', { ...b, status: { up: true } }, { subresource: 'status' });
  await s1.create('routes', node('r'));
  await s1.delete('nodes', 'a');
  const before = { nodes: s1.list('nodes'), routes: s1.list('routes'), rv: s1.resourceVersion() };
  await s1.close();
  assert.equal(existsSync(join(dir, 'LOCK')), false, 'close releases the lock');
  const s2 = await openAnyKindStore({ dir });
  t.after(() => s2.close());
  assert.deepEqual({ nodes: s2.list('nodes'), routes: s2.list('routes'), rv: s2.resourceVersion() }, before);
  assert.equal(s2.get('nodes', 'a'), undefined);
  const again = await s2.create('nodes', node('a'));
  assert.equal(again.metadata.resourceVersion, '6');
  assert.notEqual(again.metadata.uid, a.metadata.uid);
});

test('a compaction that starts while the event loop is busy writes its snapshot after the busy spell', async (t) => {
  const dir = tempDir(t);
  const logs: { msg?: string; waitedMs?: number }[] = [];
  const s = await openAnyKindStore({
    dir,
    compactAfterBytes: 1024 * 1024,
    compactionPace: { workMs: 0, stepMs: 10, maxWaitMs: 10_000 },
    logger: (l) => logs.push(l),
  });
  t.after(() => s.close());
  // 1,000 objects: a snapshot of five chunks, so the pacer is asked four times.
  for (let i = 0; i < 1000; i += 100)
    await Promise.all(
      Array.from({ length: 100 }, (_, j) => s.create('nodes', node(`n${i + j}`, { spec: { pad: 'x'.repeat(200) } }))),
    );
  assert.ok(s.stats().journal.bytes < 512 * 1024, `journal ${s.stats().journal.bytes} bytes`);
  assert.ok(!s.stats().journal.compacting && s.stats().journal.compactions === 0);
  // A busy spell of ~600 ms (turns of 15 ms of synchronous work), then the write that starts a compaction.
  const busyUntil = busySpell(600);
  for (let i = 0; !s.stats().journal.compacting; i++)
    await s.update('nodes', node('n0', { spec: { pad: `${i}`.repeat(100_000 / String(i).length) } }));
  assert.ok(performance.now() < busyUntil, 'the compaction started during the busy spell');
  while (s.stats().journal.compacting) await settle(5);
  const done = s.stats().journal.lastCompaction;
  assert.ok(done && done.waitedMs > 0, `waited ${done?.waitedMs} ms`);
  assert.ok(performance.now() >= busyUntil, 'the snapshot was finished after the busy spell');
  assert.ok(logs.some((l) => l.msg === 'Compacted store' && typeof l.waitedMs === 'number'));
});

test('compaction writes a snapshot, drops old segments, and a reopen gives the same state', async (t) => {
  const dir = tempDir(t);
  const logs: { msg?: string }[] = [];
  const s1 = await openAnyKindStore({ dir, compactAfterBytes: 4096, logger: (l) => logs.push(l) });
  for (let round = 0; round < 5; round++) {
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        s1
          .update('nodes', node(`n${i}`, { spec: { round } }))
          .catch(() => s1.create('nodes', node(`n${i}`, { spec: { round } }))),
      ),
    );
    await s1.create('nodes', node(`x${round}`));
    if (round > 0) await s1.delete('nodes', `x${round - 1}`);
  }
  while (s1.stats().journal.compacting) await settle(5);
  const stats = s1.stats();
  assert.ok(stats.journal.compactions >= 2, `compactions: ${stats.journal.compactions}`);
  assert.ok(logs.some((l) => l.msg === 'Compacted store'));
  const files = readdirSync(dir).filter((f) => f.startsWith('journal-'));
  assert.ok(!files.includes(SEG1), `old segments are removed: ${files.join(' ')}`);
  assert.ok(existsSync(join(dir, 'snapshot.jsonl')));
  const before = { items: s1.list('nodes').items, rv: s1.resourceVersion() };
  await s1.close();
  const s2 = await openAnyKindStore({ dir });
  t.after(() => s2.close());
  assert.deepEqual({ items: s2.list('nodes').items, rv: s2.resourceVersion() }, before);
  assert.equal(s2.list('nodes').items.length, 41);
  assert.ok(s2.get('nodes', 'x4') && !s2.get('nodes', 'x3'));
});

test('a torn last journal line is dropped (and logged), and the store goes on', async (t) => {
  const dir = tempDir(t);
  const s1 = await openAnyKindStore({ dir });
  await s1.create('nodes', node('a'));
  await s1.create('nodes', node('b'));
  await s1.close();
  const good = statSync(join(dir, SEG1)).size;
  appendFileSync(join(dir, SEG1), '{"rv":3,"op":"put","plural":"nodes","name":"c","obj":{"metad');
  const logs: { msg?: string }[] = [];
  const s2 = await openAnyKindStore({ dir, logger: (l) => logs.push(l) });
  assert.deepEqual(
    s2.list('nodes').items.map((o) => o.metadata.name),
    ['a', 'b'],
  );
  assert.ok(logs.some((l) => l.msg === 'Dropped torn journal tail'));
  assert.equal(statSync(join(dir, SEG1)).size, good, 'the torn bytes are cut off the file');
  await s2.create('nodes', node('c'));
  await s2.close();
  appendFileSync(join(dir, SEG1), '{"rv":4,"op":"put","plural":"nodes"\n'); // complete but unparseable last line
  const s3 = await openAnyKindStore({ dir, logger: (l) => logs.push(l) });
  t.after(() => s3.close());
  assert.deepEqual(
    s3.list('nodes').items.map((o) => o.metadata.name),
    ['a', 'b', 'c'],
  );
  assert.equal(s3.resourceVersion(), '3');
});

test('a corrupt line in the middle of the journal fails the open with the file and line', async (t) => {
  const dir = tempDir(t);
  const s1 = await openAnyKindStore({ dir });
  for (const n of ['a', 'b', 'c']) await s1.create('nodes', node(n));
  await s1.close();
  const file = join(dir, SEG1);
  const lines = readFileSync(file, 'utf8').split('\n');
  lines[1] = lines[1].slice(0, 20) + '#' + lines[1].slice(21);
  writeFileSync(file, lines.join('\n'));
  for (let i = 0; i < 2; i++) {
    // the failed open released the lock: the same error again, not "locked"
    await assert.rejects(openAnyKindStore({ dir }), (e: unknown) => {
      assert.ok(e instanceof Error);
      assert.match(e.message, new RegExp(`corrupt store journal ${file}:2: .*refusing to open`));
      return true;
    });
  }
});

test('a damaged or truncated snapshot fails the open with the file and line', async (t) => {
  const dir = tempDir(t);
  const s1 = await openAnyKindStore({ dir, compactAfterBytes: 1 });
  await s1.create('nodes', node('a'));
  await s1.create('nodes', node('b'));
  while (s1.stats().journal.compacting || s1.stats().journal.compactions === 0) await settle(5);
  await s1.close();
  const snap = join(dir, 'snapshot.jsonl');
  const text = readFileSync(snap, 'utf8');
  writeFileSync(snap, text.replace('"plural"', '"plural'));
  await assert.rejects(openAnyKindStore({ dir }), /corrupt store snapshot .*snapshot\.jsonl:2: /);
  writeFileSync(snap, text.split('\n').slice(0, 2).join('\n') + '\n');
  await assert.rejects(openAnyKindStore({ dir }), /corrupt store snapshot .*snapshot\.jsonl:2: truncated/);
  writeFileSync(snap, '');
  await assert.rejects(openAnyKindStore({ dir }), /corrupt store snapshot .*snapshot\.jsonl:1: /);
});

test("the lock: one owner at a time; a dead owner's lock is taken over", async (t) => {
  const dir = tempDir(t);
  const s1 = await openAnyKindStore({ dir });
  await assert.rejects(openAnyKindStore({ dir }), /store .* is locked by this process/);
  await s1.close();
  const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.after(() => sleeper.kill('SIGKILL'));
  writeFileSync(join(dir, 'LOCK'), `${sleeper.pid}\n`);
  await assert.rejects(
    openAnyKindStore({ dir }),
    new RegExp(`locked by process ${sleeper.pid}: only one process may own a store`),
  );
  const dead = spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim();
  writeFileSync(join(dir, 'LOCK'), `${dead}\n`);
  const s2 = await openAnyKindStore({ dir });
  assert.equal(readFileSync(join(dir, 'LOCK'), 'utf8').split(' ')[0], String(process.pid));
  await s2.close();
});
