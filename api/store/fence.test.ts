/**
 * Killed between a write's acceptance and its fsync: a reader saw the write and its resourceVersion, the
 * crash lost it, and the reopened store never issues that resourceVersion again — a watch from it is 410.
 * Once with the journal's write(2) held (a kill alone loses the write), once through the power-loss layer
 * with its fdatasync held and the power cut after the kill (the write reached the page cache; the cut loses it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { ApiError } from '../meta/api-error.ts';
import { restoreDurableImage } from './testdata/durable-image.ts';
import { node, openAnyKindStore, record, tempDir, tempStore } from './testdata/helpers.ts';

const CHILD = join(import.meta.dirname, 'testdata', 'held-write-child.ts');

/** Runs the child until it reports that a reader saw the held write, then SIGKILLs it; returns its lines. */
function killWhileHeld(dir: string, imagePath?: string): Promise<Map<string, string[]>> {
  return new Promise((resolve, reject) => {
    const args = ['--import', 'tsx', CHILD, dir, ...(imagePath ? [imagePath] : [])];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const seen = new Map<string, string[]>();
    let rest = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() as string;
      for (const line of parts) {
        const [what, ...fields] = line.split(' ');
        seen.set(what, fields);
      }
      if (seen.has('held') && seen.has('seen')) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL') resolve(seen);
      else reject(new Error(`the child exited with ${code ?? signal} before the kill: ${JSON.stringify([...seen])}`));
    });
  });
}

/** Kills the child while a write it served is not durable (then cuts the power, with `powerLoss`), and checks the fence. */
async function lostWriteIsFenced(t: TestContext, powerLoss: boolean): Promise<void> {
  const dir = tempDir(t);
  const image = powerLoss ? mkdtempSync(join(tmpdir(), 'meshctl-image-')) : undefined;
  if (image) t.after(() => rmSync(image, { recursive: true, force: true }));
  const lines = await killWhileHeld(dir, image);
  if (image) restoreDurableImage(dir, image);
  const durableRv = Number(lines.get('durable')?.[0]);
  const [name, seenRv, listRv] = lines.get('seen') ?? [];
  assert.equal(name, 'b');
  assert.equal(Number(seenRv), durableRv + 1, 'the reader saw the write that was not durable yet');
  assert.equal(listRv, seenRv, 'and a list at its resourceVersion');

  const store = await openAnyKindStore({ dir });
  t.after(() => store.close());
  assert.equal(store.get('nodes', 'b'), undefined, 'the crash lost the write');
  const fromDurable = record(store, 'nodes', { resourceVersion: String(durableRv) });
  const next = await store.create('nodes', node('c'));
  assert.ok(Number(next.metadata.resourceVersion) > Number(seenRv), `rv ${next.metadata.resourceVersion} is new`);
  assert.throws(
    () => store.watch('nodes', { resourceVersion: seenRv }, () => {}),
    (e: unknown) => e instanceof ApiError && e.code === 410,
  );
  const events = await fromDurable.next(1);
  assert.deepEqual(
    events.map((e) => `${e.type} ${e.object.metadata?.name}`),
    ['ADDED c'],
    'a watch from the durable rv resumes and misses nothing',
  );
  fromDurable.stop();
}

test('a write seen before its write(2) and lost in a crash: its resourceVersion is never reused, a watch from it is 410', (t) =>
  lostWriteIsFenced(t, false));

test('a write seen before its fdatasync, then a kill and a power cut: its resourceVersion is never reused, a watch from it is 410', (t) =>
  lostWriteIsFenced(t, true));

test('a clean close fences nothing: resourceVersions continue and a watch from the last one resumes', async (t) => {
  const dir = tempDir(t);
  const s1 = await openAnyKindStore({ dir });
  await s1.create('nodes', node('a'));
  await s1.close();
  const s2 = await openAnyKindStore({ dir });
  t.after(() => s2.close());
  assert.equal(s2.resourceVersion(), '1');
  const w = record(s2, 'nodes', { resourceVersion: '1' });
  assert.equal((await s2.create('nodes', node('b'))).metadata.resourceVersion, '2');
  assert.deepEqual(
    (await w.next(1)).map((e) => e.object.metadata?.name),
    ['b'],
  );
  w.stop();
});

test('writes are refused (503) while maxUndurable resourceVersions wait for the disk', async (t) => {
  const { store } = await tempStore(t, { maxUndurable: 2 });
  const first = [store.create('nodes', node('a')), store.create('nodes', node('b'))]; // both wait for one fsync
  await assert.rejects(store.create('nodes', node('c')), (e: unknown) => e instanceof ApiError && e.code === 503);
  await Promise.all(first);
  assert.equal((await store.create('nodes', node('c'))).metadata.resourceVersion, '3');
});
