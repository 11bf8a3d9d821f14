/**
 * The child process of fence.test.ts: opens the store in argv[2], makes one write durable, then holds the
 * next write on its way to the disk, so that it is accepted, applied in memory and readable, but not durable
 * when the parent SIGKILLs this process. Without argv[3], every later write(2) of the journal is held
 * (node:fs `write` is replaced before the store is imported, and never calls back): a kill alone loses the
 * write. With argv[3], the store writes through the power-loss layer (power-loss-fs.ts, its durable image
 * there) and the journal's fdatasync is held instead: the write(2) has reached the page cache, so only the
 * power cut the parent then simulates loses it. Protocol on stdout (one line each, blocking writes):
 *   durable <rv>              the first write is durable
 *   held                      the journal's write(2), or fdatasync, of the second write is being held
 *   seen <name> <rv> <listRv> a reader saw the second write (get) and the list's resourceVersion
 */
import fs, { writeSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

function out(line: string): void {
  writeSync(1, `${line}\n`);
}

const [dir, imagePath] = process.argv.slice(2);
let hold = false;
if (!imagePath) {
  const realWrite = fs.write;
  const heldWrite = (...args: unknown[]): void => {
    if (hold && typeof args[0] === 'number' && args[0] > 2) return out('held');
    (realWrite as (...a: unknown[]) => void)(...args);
  };
  fs.write = heldWrite as typeof fs.write;
  syncBuiltinESMExports();
}

const { node, openAnyKindStore } = await import('./helpers.ts');
const { PowerLossFs } = await import('./power-loss-fs.ts');

/** The power-loss layer, with the fdatasync calls held once `hold` is set. */
class HeldSyncFs extends PowerLossFs {
  override dataSync(fd: number): Promise<void> {
    if (!hold) return super.dataSync(fd);
    out('held');
    return new Promise<void>(() => {});
  }
}

const store = await openAnyKindStore({ dir, ...(imagePath ? { fs: new HeldSyncFs(dir, { imagePath }) } : {}) });
const a = await store.create('nodes', node('a'));
out(`durable ${a.metadata.resourceVersion}`);
hold = true;
void store.create('nodes', node('b'));
const b = store.get('nodes', 'b');
out(`seen b ${b?.metadata.resourceVersion} ${store.list('nodes').resourceVersion}`);
setInterval(() => {}, 60_000); // wait for the SIGKILL
