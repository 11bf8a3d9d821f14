/**
 * The crash test under simulated power loss (testdata/power-loss-fs.ts): 64 concurrent writers (compacting
 * all the time) and the power cut after a random number of acknowledged writes, many times. A cut keeps only
 * what was fdatasync'd (files) and fsync'd (directory entries), which SIGKILL (crash.test.ts) cannot show:
 * the page cache survives a killed process. After each cut the store must open and hold every acknowledged
 * write (testdata/crash-check.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkReopened, type Known } from './testdata/crash-check.ts';
import { openAnyKindStore, tempDir, type AnyKindStore } from './testdata/helpers.ts';
import { PowerLossFs } from './testdata/power-loss-fs.ts';

const ROUNDS = 40;
const WRITERS = 64;
const KEYS_PER_WRITER = 4;
const PLURALS = ['nodes', 'routes'];
const PAD = 'p'.repeat(600);

/** One round's writers: they report on `lines` and call `onAck` after each acknowledged write. */
function startWriters(store: AnyKindStore, lines: string[], onAck: () => void, onError: (e: unknown) => void): void {
  let counter = 0;
  const writeOnce = async (plural: string, name: string): Promise<void> => {
    const tag = `t${++counter}`;
    const cur = store.get(plural, name);
    const op = !cur ? 'create' : Math.random() < 0.2 ? 'delete' : 'update';
    lines.push(`op ${plural} ${name} ${op} ${tag}`);
    const obj = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Thing', metadata: { name }, spec: { tag, pad: PAD } };
    const meta = { name, resourceVersion: cur?.metadata.resourceVersion };
    const done =
      op === 'create'
        ? await store.create(plural, obj)
        : op === 'update'
          ? await store.update(plural, { ...obj, metadata: meta })
          : await store.delete(plural, name, { uid: cur?.metadata.uid });
    lines.push(`ack ${plural} ${name} ${done.metadata.resourceVersion} ${op} ${tag}`);
    onAck();
  };
  for (let w = 0; w < WRITERS; w++) {
    const keys = Array.from({ length: KEYS_PER_WRITER }, (_, k) => w * KEYS_PER_WRITER + k);
    void (async () => {
      for (;;) {
        const i = keys[Math.floor(Math.random() * keys.length)];
        await writeOnce(PLURALS[i % PLURALS.length], `obj-${i}`);
      }
    })().catch(onError);
  }
}

/** Runs writers until `acks` writes are acknowledged, then cuts the power; resolves with the round's lines. */
async function roundUntilPowerLoss(dir: string, acks: number): Promise<{ lines: string[]; duringCompaction: boolean }> {
  const fs = new PowerLossFs(dir);
  let compacting = false;
  const logger = (l: { msg: string }): void => {
    compacting = l.msg === 'Started compaction' || (compacting && !l.msg.startsWith('Compact'));
  };
  // Power losses should land while snapshots are written, not while a compaction waits for the writers to pause.
  const store = await openAnyKindStore({
    dir,
    fs,
    compactAfterBytes: 384 * 1024,
    compactionPace: { maxWaitMs: 0 },
    logger,
  });
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let count = 0;
    startWriters(
      store,
      lines,
      () => {
        if (++count !== acks) return;
        const duringCompaction = compacting;
        fs.powerLoss().then(() => resolve({ lines, duringCompaction }), reject);
      },
      reject,
    );
  });
}

test('a power loss at random moments never loses an acknowledged write', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  let known = new Map<string, Known>();
  let acks = 0;
  let duringCompaction = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const cut = await roundUntilPowerLoss(dir, 1 + Math.floor(Math.random() * 1500));
    if (cut.duringCompaction) duringCompaction++;
    const store = await openAnyKindStore({ dir });
    try {
      const checked = checkReopened(store, known, cut.lines, round, PLURALS);
      acks += checked.acks;
      known = checked.next;
    } finally {
      await store.close();
    }
  }
  t.diagnostic(`${ROUNDS} power losses, ${acks} acknowledged writes checked, ${duringCompaction} during a compaction`);
  assert.ok(duringCompaction > 0, 'no power loss landed during a compaction');
});
