/**
 * Runs a bench script in a child Node process (through tsx) and collects its stdout.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Spawns `node --expose-gc --import tsx <file> ...args` through `sh`, which first raises the soft limit on open
 * files to the hard limit (the watch benchmark needs ~2,000 descriptors); resolves with stdout, rejects on a
 * non-zero exit.
 */
export function runTsChild(file: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((done, reject) => {
    const script = 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"';
    const child = spawn('sh', ['-c', script, process.execPath, '--expose-gc', '--import', 'tsx', file, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...env },
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) done(out);
      else reject(new Error(`${file} ${args.join(' ')} exited with ${signal ?? code}`));
    });
  });
}

/** True when `metaUrl` is the module Node was started with. */
export function isMain(metaUrl: string): boolean {
  return process.argv[1] !== undefined && fileURLToPath(metaUrl) === resolve(process.argv[1]);
}
