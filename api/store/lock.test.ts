/**
 * The store's lock names a process by pid, start time and boot: a LOCK left by a crashed PID 1 (or any pid
 * now reused by another process, or from another boot) does not block a new open; a live store does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentBootId, procStat } from '../meta/process-identity.ts';
import { openAnyKindStore, tempDir } from './testdata/helpers.ts';

const CHILD = join(import.meta.dirname, 'testdata', 'held-write-child.ts');

/** Opens and closes the store in `dir` after writing `lock` as its LOCK file. */
async function opensOver(dir: string, lock: string): Promise<void> {
  writeFileSync(join(dir, 'LOCK'), lock);
  const store = await openAnyKindStore({ dir });
  await store.close();
}

function otherStartTime(pid: number): string {
  return String(Number(procStat(pid)?.startTime) + 1);
}

test('a LOCK naming a live pid that is another process (a restarted PID 1, a reused pid, another boot) is stale', async (t) => {
  const dir = tempDir(t);
  assert.ok(procStat(1), 'pid 1 runs');
  await opensOver(dir, `1 ${otherStartTime(1)} ${currentBootId()}\n`);
  // The control plane restarted as the same pid (PID 1 in its container): the LOCK names this very pid.
  await opensOver(dir, `${process.pid} ${otherStartTime(process.pid)} ${currentBootId()}\n`);
  await opensOver(dir, `${process.pid}\n`);
  // The same pid and start time, but before a reboot.
  await opensOver(dir, `1 ${procStat(1)?.startTime} not-this-boot\n`);
});

test('a LOCK held by a live store in another process blocks the open until that process is gone', async (t) => {
  const dir = tempDir(t);
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('close', resolve));
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\nseen ') || out.startsWith('seen ')) resolve();
    });
    child.on('close', (code) => reject(new Error(`the child exited (${code}) before opening the store: ${out}`)));
  });
  await assert.rejects(openAnyKindStore({ dir }), new RegExp(`locked by process ${child.pid}: only one process`));
  child.kill('SIGKILL');
  await exited;
  const store = await openAnyKindStore({ dir });
  await store.close();
});
