// `npm start`: runs the control plane on this machine with a local data dir, and says how to use it.
// (The whole local mesh — control plane plus agents — arrives with the agent.)
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

const dataDir = resolve(process.env.MESHCTL_DATA_DIR ?? '.meshctl/control-plane');
const listen = process.env.MESHCTL_LISTEN ?? '127.0.0.1:6443';
const bin = resolve('dist/mesh-control-plane.js');
if (!existsSync(bin)) {
  console.error('dist/ is missing: run `npm install` (it builds the binaries) or `npm run build`.');
  process.exit(1);
}

const child = spawn(process.execPath, [bin, '--data-dir', dataDir, '--listen', listen], {
  stdio: ['ignore', 'inherit', 'pipe'],
});
const lines = createInterface({ input: child.stderr });
lines.on('line', (line) => {
  let event;
  try { event = JSON.parse(line); } catch { console.error(line); return; }
  if (event.msg === 'Serving') {
    console.log(`\nmeshctl control plane is serving at ${event.url} (data in ${dataDir})\n`);
    console.log('Point meshctl (or kubectl) at it:\n');
    console.log(`export MESHCONFIG=${event.meshconfig}`);
    console.log(`export PATH=${resolve('dist/bin')}:$PATH`);
    console.log('meshctl apply -f manifests/samples/ && meshctl get nodes');
    console.log(`kubectl --kubeconfig ${event.meshconfig} get nodes\n`);
    console.log('Ctrl-C stops it.\n');
  } else if (process.env.MESHCTL_VERBOSE || event.level !== 'info') {
    console.error(line);
  }
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
