/**
 * The child process of fence.test.ts: opens the store in argv[2], makes one write durable, then holds every
 * later write(2) of the journal (node:fs `write` is replaced before the store is imported, and never calls
 * back), so the next write is accepted, applied in memory and readable, but not on disk when the parent
 * SIGKILLs this process. Protocol on stdout (one line each, blocking writes):
 *   durable <rv>              the first write is durable
 *   held                      the journal's write(2) of the second write is being held
 *   seen <name> <rv> <listRv> a reader saw the second write (get) and the list's resourceVersion
 */
import fs, { writeSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

function out(line: string): void {
  writeSync(1, `${line}\n`);
}

let hold = false;
const realWrite = fs.write;
const heldWrite = (...args: unknown[]): void => {
  if (hold && typeof args[0] === 'number' && args[0] > 2) return out('held');
  (realWrite as (...a: unknown[]) => void)(...args);
};
fs.write = heldWrite as typeof fs.write;
syncBuiltinESMExports();

const { node, openAnyKindStore } = await import('./helpers.ts');
const store = await openAnyKindStore({ dir: process.argv[2] });
const a = await store.create('nodes', node('a'));
out(`durable ${a.metadata.resourceVersion}`);
hold = true;
void store.create('nodes', node('b'));
const b = store.get('nodes', 'b');
out(`seen b ${b?.metadata.resourceVersion} ${store.list('nodes').resourceVersion}`);
setInterval(() => {}, 60_000); // wait for the SIGKILL
