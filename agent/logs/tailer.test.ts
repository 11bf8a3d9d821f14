import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logPath, rotateLog } from '../drivers/log-file.ts';
import { openTailer, serviceOfLogFile, type Tailer } from './tailer.ts';

function setup(t: { after(fn: () => void): void }) {
  const stateDir = mkdtempSync(join(tmpdir(), 'meshctl-tailer-'));
  t.after(() => rmSync(stateDir, { recursive: true, force: true }));
  mkdirSync(join(stateDir, 'logs'));
  const errors: string[] = [];
  const open = (maxLineBytes?: number): Promise<Tailer> =>
    openTailer({
      logsDir: join(stateDir, 'logs'),
      positionsPath: join(stateDir, 'log-shipper', 'positions.json'),
      ...(maxLineBytes ? { maxLineBytes } : {}),
      logger: { info: () => {}, error: (msg, f) => void errors.push(`${msg} ${JSON.stringify(f)}`) },
    });
  const write = (id: string, from: number, to: number): void => {
    for (let n = from; n <= to; n++) appendFileSync(logPath(stateDir, id), `line ${n}\n`);
  };
  return { stateDir, open, write, errors };
}

/** Polls (committing each time) until a poll returns nothing; the lines of `service`. */
async function readAll(tailer: Tailer, service = 'web-on-a/server'): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const p = await tailer.poll();
    await p.commit();
    if (!p.entries.length) return out;
    out.push(...p.entries.filter((e) => e.service === service).map((e) => e.line));
  }
}

const lines = (from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);

test('service ids come back from the log file names the supervisor writes', () => {
  assert.equal(serviceOfLogFile('web-on-a%2Fserver.log'), 'web-on-a/server');
  assert.equal(serviceOfLogFile('web-on-a%2Fserver.log.1'), undefined);
  assert.equal(serviceOfLogFile('x.json'), undefined);
});

test('complete lines of every service are read once; a line without its newline waits for it', async (t) => {
  const s = setup(t);
  const tailer = await s.open();
  s.write('web-on-a/server', 1, 3);
  s.write('db-on-a/main', 1, 1);
  appendFileSync(logPath(s.stateDir, 'web-on-a/server'), 'line 4 is half');
  const p = await tailer.poll();
  await p.commit();
  assert.deepEqual(
    p.entries.filter((e) => e.service === 'web-on-a/server').map((e) => e.line),
    lines(1, 3),
  );
  assert.deepEqual(
    p.entries.filter((e) => e.service === 'db-on-a/main').map((e) => e.line),
    ['line 1'],
  );
  assert.ok(p.entries.every((e) => !Number.isNaN(Date.parse(e.time))));
  appendFileSync(logPath(s.stateDir, 'web-on-a/server'), ' written\r\n');
  assert.deepEqual(await readAll(tailer), ['line 4 is half written']);
});

test('positions are kept only on commit: uncommitted lines are read again, a restarted tailer goes on after the committed ones', async (t) => {
  const s = setup(t);
  let tailer = await s.open();
  s.write('web-on-a/server', 1, 5);
  assert.deepEqual(
    (await tailer.poll()).entries.map((e) => e.line),
    lines(1, 5),
  );
  assert.deepEqual(
    (await tailer.poll()).entries.map((e) => e.line),
    lines(1, 5),
    'not committed: the same lines again',
  );
  await (await tailer.poll()).commit();
  s.write('web-on-a/server', 6, 8);
  tailer = await s.open();
  assert.deepEqual(await readAll(tailer), lines(6, 8), 'a new tailer (agent restart) neither loses nor repeats lines');
});

test('copy-truncate rotation: the unread rest of the old part comes from .1, then the new file from its start', async (t) => {
  const s = setup(t);
  const tailer = await s.open();
  s.write('web-on-a/server', 1, 5);
  assert.deepEqual(await readAll(tailer), lines(1, 5));
  s.write('web-on-a/server', 6, 8);
  assert.equal(await rotateLog(logPath(s.stateDir, 'web-on-a/server'), 0), true);
  s.write('web-on-a/server', 9, 10);
  assert.deepEqual(await readAll(tailer), lines(6, 10));
  s.write('web-on-a/server', 11, 11);
  assert.deepEqual(await readAll(tailer), ['line 11']);
  assert.deepEqual(s.errors, []);
});

test('a rotation is noticed even when the new file grew past the old position before the next read', async (t) => {
  const s = setup(t);
  let tailer = await s.open();
  s.write('web-on-a/server', 1, 3);
  assert.deepEqual(await readAll(tailer), lines(1, 3));
  s.write('web-on-a/server', 4, 4);
  await rotateLog(logPath(s.stateDir, 'web-on-a/server'), 0);
  s.write('web-on-a/server', 5, 40);
  tailer = await s.open();
  assert.deepEqual(await readAll(tailer), lines(4, 40));
});

test('when .1 was replaced before it was read, the tailer says so and goes on with the new file', async (t) => {
  const s = setup(t);
  const tailer = await s.open();
  s.write('web-on-a/server', 1, 3);
  await readAll(tailer);
  s.write('web-on-a/server', 4, 4);
  await rotateLog(logPath(s.stateDir, 'web-on-a/server'), 0);
  writeFileSync(`${logPath(s.stateDir, 'web-on-a/server')}.1`, 'something else\n');
  s.write('web-on-a/server', 5, 6);
  assert.deepEqual(await readAll(tailer), lines(5, 6));
  assert.equal(s.errors.length, 1);
  assert.match(s.errors[0], /Lost part of a rotated service log/);
});

test('an over-long line is cut into pieces', async (t) => {
  const s = setup(t);
  const tailer = await s.open(10);
  appendFileSync(logPath(s.stateDir, 'web-on-a/server'), `${'x'.repeat(25)}\nshort\n`);
  assert.deepEqual(await readAll(tailer), ['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5), 'short']);
  appendFileSync(logPath(s.stateDir, 'web-on-a/server'), 'y'.repeat(23));
  assert.deepEqual(await readAll(tailer), ['y'.repeat(10), 'y'.repeat(10)], 'without newline: whole pieces only');
});
