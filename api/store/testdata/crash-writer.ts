/**
 * The child process of crash.test.ts: opens the store in argv[2] (with tiny compaction threshold so
 * compactions run all the time) and writes forever with 64 concurrent writers until it is SIGKILLed. With
 * argv[3], it writes through the power-loss layer (power-loss-fs.ts) keeping its durable image there, so the
 * parent can cut the power after the kill.
 * Each writer owns its keys, so a key has at most one write in flight. Protocol on stdout (one line each,
 * written with a blocking write(2) before the next step):
 *   ready <rv>                          the store is open
 *   op <plural> <name> <create|update|delete> <tag>    a write is about to be issued
 *   ack <plural> <name> <rv> <create|update|delete> <tag>    that write was acknowledged (durable)
 *   log <json>                          a store log line (compactions)
 */
import { writeSync } from 'node:fs';
import { openStore } from '../index.ts';
import { PowerLossFs } from './power-loss-fs.ts';

const dir = process.argv[2];
const imagePath = process.argv[3];
const WRITERS = 64;
const KEYS_PER_WRITER = 4;
const PLURALS = ['nodes', 'routes'];
const PAD = 'p'.repeat(600);

/** A blocking write(2) to fd 1, so a line is in the pipe before the next statement runs (process.stdout may queue). */
function out(line: string): void {
  const buf = Buffer.from(`${line}\n`);
  for (let off = 0; off < buf.length;) {
    try {
      off += writeSync(1, buf, off);
    } catch (e) {
      if ((e as { code?: string }).code !== 'EAGAIN') throw e;
    }
  }
}

const store = await openStore({
  dir,
  ...(imagePath ? { fs: new PowerLossFs(dir, { imagePath }) } : {}),
  compactAfterBytes: 384 * 1024,
  // Kills should land while snapshots are written, not while a compaction waits for the writers to pause.
  compactionPace: { maxWaitMs: 0 },
  logger: (l) => out(`log ${JSON.stringify(l)}`),
});
out(`ready ${store.resourceVersion()}`);

let counter = 0;

async function writeOnce(plural: string, name: string): Promise<void> {
  const tag = `${process.pid}-${++counter}`;
  const cur = store.get(plural, name);
  const op = !cur ? 'create' : Math.random() < 0.2 ? 'delete' : 'update';
  out(`op ${plural} ${name} ${op} ${tag}`);
  const obj = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Thing', metadata: { name }, spec: { tag, pad: PAD } };
  let rv: string | undefined;
  if (op === 'create') rv = (await store.create(plural, obj)).metadata.resourceVersion;
  else if (op === 'update')
    rv = (await store.update(plural, { ...obj, metadata: { name, resourceVersion: cur?.metadata.resourceVersion } }))
      .metadata.resourceVersion;
  else rv = (await store.delete(plural, name, { uid: cur?.metadata.uid })).metadata.resourceVersion;
  out(`ack ${plural} ${name} ${rv} ${op} ${tag}`);
}

async function writer(w: number): Promise<void> {
  const keys = Array.from({ length: KEYS_PER_WRITER }, (_, k) => {
    const i = w * KEYS_PER_WRITER + k;
    return { plural: PLURALS[i % PLURALS.length], name: `obj-${i}` };
  });
  for (;;) {
    const { plural, name } = keys[Math.floor(Math.random() * keys.length)];
    await writeOnce(plural, name);
  }
}

await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w))).catch((e: unknown) => {
  out(`error ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
});
