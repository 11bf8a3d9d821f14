/**
 * The crash test: a child process writes to the store with 64 concurrent writers (compacting all the time)
 * and is SIGKILLed at a random moment, 50+ times. After each kill the store must open and hold every
 * acknowledged write: for each object, the state of its last acknowledged write, or of the one write that
 * was in flight for it when the process died (an unacknowledged write may or may not have landed).
 *
 * A SIGKILL leaves the page cache, so it cannot show a write acknowledged before its fdatasync. The second
 * test runs the same rounds with the child writing through the power-loss layer (testdata/power-loss-fs.ts):
 * after each kill the power is cut too, and the directory keeps only what was fdatasync'd and fsync'd.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkReopened, type Known } from './testdata/crash-check.ts';
import { restoreDurableImage } from './testdata/durable-image.ts';
import { openAnyKindStore, tempDir } from './testdata/helpers.ts';

const ROUNDS = 52;
const POWER_LOSS_ROUNDS = 40;
const WRITER = join(import.meta.dirname, 'testdata', 'crash-writer.ts');

interface Round {
  lines: string[];
  killedDuringCompaction: boolean;
}

function runChild(dir: string, imagePath?: string): Promise<Round> {
  return new Promise((resolve, reject) => {
    const args = ['--import', 'tsx', WRITER, dir, ...(imagePath ? [imagePath] : [])];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
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

/** Runs `rounds` kills (each followed by a power cut when `powerLoss`); asserts every acknowledged write survived. */
async function killRounds(t: TestContext, rounds: number, powerLoss: boolean): Promise<void> {
  const dir = tempDir(t);
  const image = powerLoss ? mkdtempSync(join(tmpdir(), 'meshctl-image-')) : undefined;
  if (image) t.after(() => rmSync(image, { recursive: true, force: true }));
  let known = new Map<string, Known>();
  let acks = 0;
  let duringCompaction = 0;
  for (let round = 1; round <= rounds; round++) {
    const { lines, killedDuringCompaction } = await runChild(dir, image);
    if (image) restoreDurableImage(dir, image);
    if (killedDuringCompaction) duringCompaction++;
    const store = await openAnyKindStore({ dir });
    try {
      const checked = checkReopened(store, known, lines, round, ['nodes', 'routes']);
      acks += checked.acks;
      known = checked.next;
    } finally {
      await store.close();
    }
  }
  const what = powerLoss ? 'kills and power cuts' : 'kills';
  t.diagnostic(`${rounds} ${what}, ${acks} acknowledged writes checked, ${duringCompaction} during a compaction`);
  assert.ok(acks > rounds * 20, `too few acknowledged writes (${acks}): the writer barely ran`);
  assert.ok(duringCompaction > 0, 'no kill landed during a compaction');
}

test('SIGKILL at random moments never loses an acknowledged write', { timeout: 120_000 }, (t) =>
  killRounds(t, ROUNDS, false),
);

test('SIGKILL and then a power cut at random moments never lose an acknowledged write', { timeout: 240_000 }, (t) =>
  killRounds(t, POWER_LOSS_ROUNDS, true),
);
