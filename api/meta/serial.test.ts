import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createKeyedSerial, createSerial } from './serial.ts';

/** A task that records its start and end, and finishes when `release()` is called. */
function gate(log: string[], name: string): { task: () => Promise<string>; release: () => void } {
  let release = (): void => {};
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    task: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
      return name;
    },
    release: () => release(),
  };
}

const turns = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

test('one lane runs tasks one at a time, in order; a failure rejects only its own task', async () => {
  const serial = createSerial();
  const log: string[] = [];
  const a = gate(log, 'a');
  const b = gate(log, 'b');
  const pa = serial(a.task);
  const failed = serial(async () => {
    log.push('fail');
    throw new Error('boom');
  });
  const pb = serial(b.task);
  await turns();
  assert.deepEqual(log, ['start a'], 'nothing else starts while a runs');
  a.release();
  await assert.rejects(failed, /boom/);
  await turns();
  b.release();
  assert.deepEqual(await Promise.all([pa, pb]), ['a', 'b']);
  assert.deepEqual(log, ['start a', 'end a', 'fail', 'start b', 'end b']);
});

test('keyed lanes: one key waits for its own tasks only; other keys run side by side', async () => {
  const serial = createKeyedSerial();
  const log: string[] = [];
  const a1 = gate(log, 'a1');
  const a2 = gate(log, 'a2');
  const b1 = gate(log, 'b1');
  const p = [serial('a', a1.task), serial('a', a2.task), serial('b', b1.task)];
  await turns();
  assert.deepEqual(log.sort(), ['start a1', 'start b1'], 'a2 waits for a1; b1 does not');
  b1.release();
  a1.release();
  await turns();
  assert.ok(log.includes('start a2'), 'a2 starts once a1 has settled');
  a2.release();
  assert.deepEqual(await Promise.all(p), ['a1', 'a2', 'b1']);
});
