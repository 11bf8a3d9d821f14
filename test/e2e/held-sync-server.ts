/**
 * The child process of server-fence.test.ts: the real API server (test/harness.ts `startServer`, plain HTTP)
 * over a store in argv[2]'s data directory that writes through the power-loss layer
 * (api/store/testdata/power-loss-fs.ts, its durable image in argv[3]). After a line `hold` on stdin, every
 * fdatasync is held: a write then reaches the journal (the page cache) and is readable over the API, but never
 * durable, and never acknowledged. Protocol on stdout (one line each, blocking writes):
 *   serving <url> <admin token>   the server is up
 *   holding                       fdatasync calls are held from now on
 *   held                          an fdatasync is being held
 */
import { mkdirSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { controlPlanePaths } from '../../api/server/pki/first-start.ts';
import { PowerLossFs } from '../../api/store/testdata/power-loss-fs.ts';
import { startServer } from '../harness.ts';

function out(line: string): void {
  writeSync(1, `${line}\n`);
}

const [dataDir, imagePath] = process.argv.slice(2);
let hold = false;

/** The power-loss layer, with the fdatasync calls held once `hold` is set. */
class HeldSyncFs extends PowerLossFs {
  override dataSync(fd: number): Promise<void> {
    if (!hold) return super.dataSync(fd);
    out('held');
    return new Promise<void>(() => {});
  }
}

const storeDir = controlPlanePaths(dataDir).store;
mkdirSync(storeDir, { recursive: true });
const srv = await startServer({ insecure: true, dataDir, store: { fs: new HeldSyncFs(storeDir, { imagePath }) } });
out(`serving ${srv.url} ${srv.adminToken}`);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'hold') return;
  hold = true;
  out('holding');
});
