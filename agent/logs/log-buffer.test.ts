import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLogBuffer, type LogBuffer, type LogBufferOptions } from './log-buffer.ts';
import type { LogEntry } from './log-entry.ts';

const entry = (n: number, service = 'web/server'): LogEntry => ({
  service,
  time: `2026-01-01T00:00:${String(n % 60).padStart(2, '0')}Z`,
  line: `line ${n}`,
});
const range = (from: number, to: number, service?: string): LogEntry[] =>
  Array.from({ length: to - from + 1 }, (_, i) => entry(from + i, service));

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-logbuf-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Reads (and acknowledges) everything in the buffer, in batches of `batchBytes`. */
async function drain(buf: LogBuffer, batchBytes = 200): Promise<Array<{ seq: number; line: string; service: string }>> {
  const out = [];
  for (let b = await buf.peek(batchBytes); b; b = await buf.peek(batchBytes)) {
    out.push(...b.entries.map((e) => ({ seq: e.seq, line: e.line, service: e.service })));
    await buf.ack(b);
  }
  return out;
}

const diskBytes = (dir: string): number =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.seg'))
    .reduce((s, n) => s + statSync(join(dir, n)).size, 0);

test('lines come out in the order they went in, across many small segments, numbered without gaps', async (t) => {
  const dir = tempDir(t);
  const buf = await openLogBuffer({ dir, limitBytes: 1 << 20, segmentBytes: 256 });
  for (let i = 1; i <= 120; i += 3) await buf.append(range(i, i + 2, i > 60 ? 'db/main' : undefined));
  assert.ok(readdirSync(dir).filter((n) => n.endsWith('.seg')).length > 10, 'the data spans many segments');
  const out = await drain(buf, 300);
  assert.deepEqual(
    out.map((e) => e.line),
    [...range(1, 120).map((e) => e.line)],
  );
  assert.deepEqual(
    out.map((e) => e.seq),
    Array.from({ length: 120 }, (_, i) => i + 1),
  );
  assert.equal(out[59].service, 'web/server');
  assert.equal(out[60].service, 'db/main');
  assert.equal(buf.pendingBytes(), 0);
  assert.equal(readdirSync(dir).filter((n) => n.endsWith('.seg')).length, 1, 'delivered segments are deleted');
  await buf.close();
});

test('a peeked batch stays until acknowledged, and is read again after a reopen', async (t) => {
  const dir = tempDir(t);
  let buf = await openLogBuffer({ dir });
  await buf.append(range(1, 10));
  const b = (await buf.peek(100))!;
  assert.ok(b.entries.length >= 1 && b.entries.length < 10);
  assert.deepEqual((await buf.peek(100))!.entries, b.entries, 'not acknowledged: the same lines again');
  await buf.close();
  buf = await openLogBuffer({ dir });
  assert.deepEqual((await buf.peek(100))!.entries, b.entries, 'after a reopen too');
  await buf.ack(b);
  await buf.close();
  buf = await openLogBuffer({ dir });
  assert.equal(
    (await buf.peek(100))!.entries[0].seq,
    b.entries[b.entries.length - 1].seq + 1,
    'the acknowledgement is durable',
  );
  await buf.close();
});

test('bounded: beyond the limit the OLDEST lines are dropped, counted per service and persisted', async (t) => {
  const dir = tempDir(t);
  const opts: LogBufferOptions = { dir, limitBytes: 2048, segmentBytes: 512 };
  let buf = await openLogBuffer(opts);
  let dropped = { lines: 0, bytes: 0 };
  for (let i = 1; i <= 100; i += 5) {
    const d = await buf.append(range(i, i + 4, i <= 50 ? 'a/one' : 'b/two'));
    dropped = { lines: dropped.lines + d.lines, bytes: dropped.bytes + d.bytes };
    assert.ok(buf.pendingBytes() <= 2048, `never more than the limit pending (${buf.pendingBytes()})`);
    assert.ok(diskBytes(dir) <= 2048 + 512 + 100, `disk use stays near the limit (${diskBytes(dir)})`);
  }
  assert.ok(dropped.lines > 50, `most lines were dropped (${dropped.lines})`);
  assert.deepEqual(buf.dropped(), dropped);
  await buf.close();

  buf = await openLogBuffer(opts);
  assert.deepEqual(buf.dropped(), dropped, 'the counts survive a reopen');
  const kept = await drain(buf);
  const first = Number(kept[0].line.split(' ')[1]);
  assert.deepEqual(
    kept.map((e) => e.line),
    range(first, 100).map((e) => e.line),
    'what is left is the newest lines, contiguous',
  );
  assert.equal(first - 1, dropped.lines, 'exactly the lines before them were dropped');
  const bytesOf = (from: number, to: number): number =>
    range(from, to).reduce((s, e) => s + Buffer.byteLength(e.line) + 1, 0);
  assert.equal(dropped.bytes, bytesOf(1, first - 1));

  const unreported = buf.unreported();
  const one = unreported.find((u) => u.service === 'a/one')!;
  assert.equal(one.lines, 50, 'every line of the first service was dropped');
  assert.equal(
    unreported.reduce((s, u) => s + u.lines, 0),
    dropped.lines,
  );
  await buf.markReported(unreported);
  assert.deepEqual(buf.unreported(), []);
  await buf.close();
  buf = await openLogBuffer(opts);
  assert.deepEqual(buf.unreported(), [], 'reported drops stay reported');
  assert.deepEqual(buf.dropped(), dropped, 'totals are kept for the metric');
  await buf.close();
});

test('one append larger than the whole limit keeps only its newest lines', async (t) => {
  const dir = tempDir(t);
  const buf = await openLogBuffer({ dir, limitBytes: 1024 });
  await buf.append(range(1, 5));
  const d = await buf.append(range(6, 60));
  const kept = await drain(buf);
  assert.equal(kept[kept.length - 1].line, 'line 60');
  assert.equal(Number(kept[0].line.split(' ')[1]) - 1, d.lines, 'the oldest lines, old and new, went first');
  await buf.close();
});

test('a torn last record (crash mid-write) is cut on open; numbering and appends go on', async (t) => {
  const dir = tempDir(t);
  let buf = await openLogBuffer({ dir });
  await buf.append(range(1, 3));
  await buf.close();
  const seg = join(
    dir,
    readdirSync(dir).find((n) => n.endsWith('.seg'))!,
  );
  const whole = statSync(seg).size;
  appendFileSync(seg, '{"q":4,"s":"web/server","t":"2026-01-01T00:00:04Z","l":"li');
  buf = await openLogBuffer({ dir });
  assert.equal(statSync(seg).size, whole, 'the half record is gone');
  await buf.append([entry(4)]);
  assert.deepEqual(
    (await drain(buf)).map((e) => [e.seq, e.line]),
    [
      [1, 'line 1'],
      [2, 'line 2'],
      [3, 'line 3'],
      [4, 'line 4'],
    ],
  );
  await buf.close();

  appendFileSync(seg, Buffer.alloc(64));
  buf = await openLogBuffer({ dir });
  await buf.append([entry(5)]);
  assert.deepEqual(
    (await drain(buf)).map((e) => e.seq),
    [5],
    'zeros from a lost write are cut too',
  );
  await buf.close();
});

test('numbering goes on after everything was delivered and the segments deleted', async (t) => {
  const dir = tempDir(t);
  let buf = await openLogBuffer({ dir, segmentBytes: 64 });
  const stream = buf.stream;
  await buf.append(range(1, 5));
  await drain(buf);
  await buf.close();
  buf = await openLogBuffer({ dir, segmentBytes: 64 });
  assert.equal(buf.stream, stream, 'the same stream');
  await buf.append([entry(6)]);
  assert.deepEqual(
    (await drain(buf)).map((e) => e.seq),
    [6],
  );
  await buf.close();
});

test('lines pushed out while a batch holding them is being sent count as dropped only when that send fails', async (t) => {
  const dir = tempDir(t);
  const opts: LogBufferOptions = { dir, limitBytes: 1024 };
  const bytesOf = (es: Array<{ line: string }>): number => es.reduce((s, e) => s + Buffer.byteLength(e.line) + 1, 0);
  let buf = await openLogBuffer(opts);

  await buf.append(range(1, 10));
  const delivered = (await buf.peek(1 << 20))!;
  await buf.append(range(11, 20));
  assert.ok(buf.pendingBytes() <= 1024, 'the new lines pushed the oldest (being sent) out');
  await buf.ack(delivered);
  assert.deepEqual(buf.dropped(), { lines: 0, bytes: 0 }, 'they were delivered: nothing was dropped');
  assert.deepEqual(buf.unreported(), []);

  const failed = (await buf.peek(1 << 20))!;
  await buf.append(range(21, 30));
  const retry = (await buf.peek(1 << 20))!;
  const lost = failed.entries.filter((e) => e.seq < retry.entries[0].seq);
  assert.ok(lost.length > 0, 'some of the failed batch was pushed out');
  assert.deepEqual(buf.dropped(), { lines: lost.length, bytes: bytesOf(lost) }, 'the send failed: they were dropped');
  assert.deepEqual(buf.unreported(), [{ service: 'web/server', lines: lost.length, bytes: bytesOf(lost) }]);
  await buf.ack(retry);

  await buf.append(range(31, 40));
  const crashed = (await buf.peek(1 << 20))!;
  await buf.append(range(41, 50));
  await buf.close();
  buf = await openLogBuffer(opts);
  const left = (await buf.peek(1 << 20))!;
  const gone = crashed.entries.filter((e) => e.seq < left.entries[0].seq);
  assert.ok(gone.length > 0);
  assert.equal(
    buf.dropped().lines,
    lost.length + gone.length,
    'a send whose outcome a restart forgot: its pushed-out lines count as dropped',
  );
  await buf.close();
});
