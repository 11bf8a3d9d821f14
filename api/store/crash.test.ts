/**
 * The crash test: a child process writes to the store with 64 concurrent writers (compacting all the time)
 * and is SIGKILLed at a random moment, 50+ times. After each kill the store must open and hold every
 * acknowledged write: for each object, the state of its last acknowledged write, or of the one write that
 * was in flight for it when the process died (an unacknowledged write may or may not have landed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { openStore } from './index.ts';
import { tempDir } from './testdata/helpers.ts';

const ROUNDS = 52;
const WRITER = join(import.meta.dirname, 'testdata', 'crash-writer.ts');

interface Write {
  op: string;
  tag: string;
  rv?: number;
}
/** What an object looked like after the previous round: present (rv, tag) or absent. */
interface Known {
  present: boolean;
  rv?: number;
  tag?: string;
}

interface Round {
  lines: string[];
  killedDuringCompaction: boolean;
}

function runChild(dir: string): Promise<Round> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: string[] = [];
    let rest = '';
    let killTimer: NodeJS.Timeout | undefined;
    let compacting = false;
    let atKill = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() as string;
      for (const line of parts) {
        lines.push(line);
        if (line.startsWith('log '))
          compacting = line.includes('"Started compaction"') || (compacting && !line.includes('"Compact'));
        if (line.startsWith('ready ') && !killTimer) {
          killTimer = setTimeout(
            () => {
              atKill = compacting;
              child.kill('SIGKILL');
            },
            20 + Math.random() * 130,
          );
        }
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killTimer);
      if (signal !== 'SIGKILL')
        reject(new Error(`writer exited with ${code ?? signal} before the kill:\n${lines.slice(-20).join('\n')}`));
      else resolve({ lines, killedDuringCompaction: atKill });
    });
  });
}

/** Per object: the last acknowledged write of the round and the write in flight after it, if any. */
function parse(lines: string[]): Map<string, { acked?: Write; inflight?: Write }> {
  const keys = new Map<string, { acked?: Write; inflight?: Write }>();
  for (const line of lines) {
    const [what, plural, name, ...rest] = line.split(' ');
    if (what !== 'op' && what !== 'ack') continue;
    const key = `${plural}/${name}`;
    const k = keys.get(key) ?? {};
    if (what === 'op') k.inflight = { op: rest[0], tag: rest[1] };
    else {
      assert.equal(k.inflight?.tag, rest[2], `ack without op: ${line}`);
      k.acked = { op: rest[1], tag: rest[2], rv: Number(rest[0]) };
      k.inflight = undefined;
    }
    keys.set(key, k);
  }
  return keys;
}

function expectations(before: Known | undefined, acked?: Write, inflight?: Write): string[] {
  const base = acked
    ? acked.op === 'delete'
      ? 'absent'
      : `present ${acked.tag} rv>=${acked.rv}`
    : before?.present
      ? `present ${before.tag} rv>=${before.rv}`
      : 'absent';
  if (!inflight) return [base];
  return [base, inflight.op === 'delete' ? 'absent' : `present ${inflight.tag}`];
}

function satisfies(actual: Known, expected: string): boolean {
  const [state, tag, rv] = expected.split(' ');
  if (state === 'absent') return !actual.present;
  if (!actual.present || actual.tag !== tag) return false;
  return rv === undefined || (actual.rv as number) >= Number(rv.slice(4));
}

test('SIGKILL at random moments never loses an acknowledged write', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  let known = new Map<string, Known>();
  let acks = 0;
  let duringCompaction = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const { lines, killedDuringCompaction } = await runChild(dir);
    if (killedDuringCompaction) duringCompaction++;
    const writes = parse(lines);
    const store = await openStore({ dir });
    try {
      const next = new Map<string, Known>();
      for (const plural of ['nodes', 'routes']) {
        for (const o of store.list(plural).items) {
          next.set(`${plural}/${o.metadata.name}`, {
            present: true,
            rv: Number(o.metadata.resourceVersion),
            tag: (o.spec as { tag: string }).tag,
          });
        }
      }
      for (const key of new Set([...known.keys(), ...writes.keys(), ...next.keys()])) {
        const w = writes.get(key);
        if (w?.acked) acks++;
        const actual = next.get(key) ?? { present: false };
        const ok = expectations(known.get(key), w?.acked, w?.inflight);
        assert.ok(
          ok.some((e) => satisfies(actual, e)),
          `round ${round}: ${key} is ${JSON.stringify(actual)}, expected one of ${ok.join(' | ')}`,
        );
      }
      const maxAcked = Math.max(0, ...[...writes.values()].map((w) => w.acked?.rv ?? 0));
      assert.ok(Number(store.resourceVersion()) >= maxAcked);
      known = next;
    } finally {
      await store.close();
    }
  }
  t.diagnostic(`${ROUNDS} kills, ${acks} acknowledged writes checked, ${duringCompaction} kills during a compaction`);
  assert.ok(acks > ROUNDS * 20, `too few acknowledged writes (${acks}): the writer barely ran`);
  assert.ok(duringCompaction > 0, 'no kill landed during a compaction');
});
