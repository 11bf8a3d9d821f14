// SIGTERM stops the built mesh-control-plane promptly however loaded: with many open watches, idle
// keep-alive connections, requests in flight, and a CPU burner competing for the machine, it logs
// Stopped and exits 0 within a generous bound; a SIGTERM during its start-up stops it cleanly too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadMeshconfig } from '../../api/client/meshconfig.ts';
import { waitFor } from '../../agent/testing.ts';
import { buildCli, type BuiltCli } from './cli-harness.ts';
import { runControlPlane } from './init-helpers.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const WATCHES = 100;
const KEEP_ALIVE = 50;
/** A stop on a loaded machine may take a while; this bounds "promptly" without racing the scheduler. */
const STOP_BOUND_MS = 30_000;

let cli: BuiltCli;
before(async () => {
  cli = await buildCli();
});
after(() => cli.cleanup());

/** Resolves with the exit code, or 'late' when the process is still running after the bound. */
const exitWithin = (exited: Promise<number | null>): Promise<number | null | 'late'> =>
  Promise.race([exited, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), STOP_BOUND_MS).unref())]);

test('SIGTERM under load: watches, keep-alive clients and a CPU burner; it logs Stopped and exits 0', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-stop-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const cp = await runControlPlane(cli, ['--data-dir', dataDir, '--listen', '127.0.0.1:0', '--node', 'cp-1']);
  t.after(() => void cp.stop());
  assert.equal(cp.serving, true, cp.output());
  const config = loadMeshconfig(join(dataDir, 'admin.meshconfig'));
  const { hostname, port } = new URL(config.server);
  const agent = new Agent({ keepAlive: true, ca: config.caData, maxSockets: WATCHES + KEEP_ALIVE + 10 });
  t.after(() => agent.destroy());
  const get = (path: string, onHeaders?: () => void): Promise<number> =>
    new Promise((resolve) => {
      const req = request(
        { agent, hostname, port, path, headers: { authorization: `Bearer ${config.token}` } },
        (res) => {
          onHeaders?.();
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', () => resolve(0));
        },
      );
      req.on('error', () => resolve(0));
      req.end();
    });

  let watching = 0;
  const watches = Array.from({ length: WATCHES }, () =>
    get(`${API}/nodes?watch=1`, () => {
      watching++;
    }),
  );
  await waitFor(() => watching === WATCHES, 30_000, `${WATCHES} watches to open`);
  const answered = await Promise.all(Array.from({ length: KEEP_ALIVE }, () => get('/version')));
  assert.deepEqual(new Set(answered), new Set([200]));
  let busy = true;
  const inFlight = (async () => {
    while (busy) await get(`${API}/nodes`);
  })();

  const burner = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
  t.after(() => {
    if (burner.exitCode === null && burner.signalCode === null) process.kill(burner.pid!, 'SIGKILL');
  });

  const started = Date.now();
  process.kill(cp.pid, 'SIGTERM');
  const code = await exitWithin(cp.exited);
  const took = Date.now() - started;
  busy = false;
  process.kill(burner.pid!, 'SIGKILL');
  assert.equal(code, 0, `exit after SIGTERM: ${code} in ${took} ms\n${cp.output().slice(-3000)}`);
  assert.match(cp.output(), /"msg":"Stopped"/);
  await Promise.all([...watches, inFlight]);
});

test('SIGTERM during start-up (after the store opened, before Serving) stops it cleanly: exit 0, Stopped', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-stop-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const bin = join(dirname(cli.bin), 'mesh-control-plane.js');
  const args = ['--data-dir', dataDir, '--listen', '127.0.0.1:0', '--node', 'cp-1'];
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    // The first line is the store's: the first-start files (a CA, a certificate) are still to be made.
    if (out === '' && d.includes('"msg":"Opened store"')) child.kill('SIGTERM');
    out += d;
  });
  const code = await exitWithin(exited);
  assert.equal(code, 0, `exit after SIGTERM: ${code} (signal ${child.signalCode})\n${out}`);
  assert.match(out, /"msg":"Shutting down","signal":"SIGTERM"/);
  assert.match(out, /"msg":"Stopped"/);
});
