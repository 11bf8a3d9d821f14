// The control plane's local Unix socket (api/server/listen-unix.ts): its mode and owner, the bearer token still
// required on it, meshctl using it (without loading node:tls) and falling back to HTTPS when it is gone or refuses,
// kubectl reading the meshconfig that names it, and a stale socket from a SIGKILLed control plane replaced.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadMeshconfig, renderMeshconfig } from '../../api/client/meshconfig.ts';
import type { ClientConfig } from '../../api/client/types.ts';
import { controlPlanePaths } from '../../api/server/pki/first-start.ts';
import { spawnControlPlane, type ControlPlaneProcess } from '../harness.ts';
import { buildCli, eventually, type BuiltCli } from './cli-harness.ts';
import { hasKubectl } from './kubectl-helpers.ts';

/** GET `path` over the Unix socket with an optional bearer token; resolves with the status code. */
function getOverSocket(socketPath: string, path: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const r = request({ socketPath, path, headers }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    r.once('error', reject);
    r.end();
  });
}

const AS_ROOT = process.getuid?.() === 0;

/** Runs `argv` as `nobody` (privileges dropped with setpriv, as test/e2e/init-nonroot.test.ts does). */
function asNobody(argv: string[]): { status: number | null; stdout: string; stderr: string } {
  const drop = ['--reuid=nobody', '--regid=nogroup', '--clear-groups'];
  return spawnSync('setpriv', [...drop, ...argv], { encoding: 'utf8', cwd: '/', timeout: 60_000 });
}

/**
 * Prints which TLS modules the process loaded, when it exits (preloaded into meshctl with `--require`), and which of
 * the built-in modules a one-shot command has no use for (`node:module`, `node:os`: cli/launcher.ts, config.ts).
 */
const TLS_PROBE = `process.on('exit', () => process.stderr.write('tls-modules=' + JSON.stringify(
  process.moduleLoadList.filter((m) => /^NativeModule (tls|_tls_wrap|https)$/.test(m))) + '\\n' +
  'unneeded-modules=' + JSON.stringify(process.moduleLoadList.filter((m) => /^NativeModule (module|os)$/.test(m))) +
  '\\n'));\n`;

describe('local API socket', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-local-socket-'));
  const dataDir = join(dir, 'cp');
  let cp: ControlPlaneProcess;
  let cli: BuiltCli;
  let admin: ClientConfig;
  const socket = controlPlanePaths(dataDir).socket;
  /** Writes a meshconfig with the admin credential and `changes` applied, and returns its path. */
  const meshconfig = (name: string, changes: Partial<ClientConfig>): string => {
    const path = join(dir, name);
    writeFileSync(path, renderMeshconfig({ ...admin, ...changes }), { mode: 0o600 });
    return path;
  };

  before(async () => {
    [cp, cli] = await Promise.all([spawnControlPlane({ dataDir }), buildCli()]);
    admin = loadMeshconfig(cp.meshconfigPath);
  });
  after(async () => {
    await cp?.stop();
    cli?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the API on a 0600 socket of its user in a 0700 directory, named in the admin meshconfig', () => {
    const st = statSync(socket);
    assert.ok(st.isSocket(), `${socket} is a socket`);
    assert.equal(st.mode & 0o777, 0o600);
    assert.equal(st.uid, process.getuid?.());
    const parent = statSync(join(dataDir, 'run'));
    assert.equal(parent.mode & 0o777, 0o700);
    assert.equal(parent.uid, process.getuid?.());
    assert.equal(admin.socketPath, socket);
    assert.match(cp.output(), /"msg":"Opened local API socket"/);
  });

  it('answers 401 on the socket without a token or with a wrong one, as over HTTPS', async () => {
    const path = '/apis/meshctl.dev/v1alpha1/nodes';
    assert.equal(await getOverSocket(socket, path), 401);
    assert.equal(await getOverSocket(socket, path, 'not-the-token'), 401);
    assert.equal(await getOverSocket(socket, path, admin.token), 200);
  });

  it('meshctl uses the socket: it answers with the HTTPS address closed, and never loads node:tls (nor node:module, node:os)', async () => {
    const probe = join(dir, 'tls-probe.cjs');
    writeFileSync(probe, TLS_PROBE);
    // Port 1 on loopback: nothing listens there, so only the socket can answer.
    const config = meshconfig('closed-port.meshconfig', { server: 'https://127.0.0.1:1' });
    const r = await cli.run(['get', 'meshes'], { config, env: { NODE_OPTIONS: `--require ${probe}` } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^NAME/);
    assert.match(r.stderr, /tls-modules=\[\]/);
    assert.match(r.stderr, /unneeded-modules=\[\]/);
    // A watch (a stream, over node:http) goes there too.
    const watch = cli.start(['get', 'meshes', '-w'], { config, env: { NODE_OPTIONS: `--require ${probe}` } });
    await eventually(() => /\nmesh\s/.test(watch.stdout()), 'the watch printed the mesh', 30_000);
    watch.kill('SIGTERM');
    const w = await watch.exited;
    assert.match(w.stderr, /tls-modules=\[\]/);
  });

  it('a watch falls back to HTTPS when the socket is missing', async () => {
    const config = meshconfig('missing-watch.meshconfig', { socketPath: join(dir, 'no-such.sock') });
    const watch = cli.start(['get', 'meshes', '-w'], { config });
    await eventually(() => /\nmesh\s/.test(watch.stdout()), 'the watch printed the mesh', 30_000);
    watch.kill('SIGTERM');
    await watch.exited;
  });

  it('meshctl falls back to HTTPS when the socket is missing or nobody accepts on it', async () => {
    const missing = meshconfig('missing.meshconfig', { socketPath: join(dir, 'no-such.sock') });
    const r1 = await cli.run(['get', 'meshes'], { config: missing });
    assert.equal(r1.code, 0, r1.stderr);
    assert.match(r1.stdout, /^NAME/);
    // A socket file nobody accepts on (ECONNREFUSED): its server was SIGKILLed after binding it.
    const stale = join(dir, 'stale.sock');
    const killed = spawnSync(process.execPath, [
      '-e',
      `require('net').createServer().listen(${JSON.stringify(stale)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    assert.equal(killed.signal, 'SIGKILL');
    assert.ok(statSync(stale).isSocket(), 'the stale socket file is left behind');
    const r2 = await cli.run(['get', 'meshes'], { config: meshconfig('refused.meshconfig', { socketPath: stale }) });
    assert.equal(r2.code, 0, r2.stderr);
    assert.match(r2.stdout, /^NAME/);
  });

  it(
    'another user cannot connect (EACCES), and its meshctl gets the answer over HTTPS',
    { skip: !AS_ROOT && 'needs root to drop to nobody' },
    async () => {
      // What nobody needs to run meshctl: the build and a meshconfig it can read (the data dir stays root's).
      chmodSync(dirname(dirname(cli.bin)), 0o755);
      chmodSync(dir, 0o755);
      const config = meshconfig('for-nobody.meshconfig', {});
      chmodSync(config, 0o644);
      const probe = asNobody([
        'node',
        '-e',
        `require('net').connect(${JSON.stringify(socket)}).on('error', (e) => console.log(e.code))`,
      ]);
      assert.equal(probe.stdout.trim(), 'EACCES', probe.stderr);
      const r = asNobody(['node', cli.bin, '--config', config, 'get', 'meshes']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^NAME/);
    },
  );

  it('kubectl reads the admin meshconfig that names the socket', { skip: !hasKubectl && 'no kubectl' }, () => {
    const r = spawnSync(
      'kubectl',
      ['--kubeconfig', cp.meshconfigPath, '--cache-dir', join(dir, 'kube'), 'get', 'meshes'],
      {
        encoding: 'utf8',
        env: { ...process.env, KUBECONFIG: '', HOME: dir },
        timeout: 30_000,
      },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^NAME/);
    assert.match(readFileSync(cp.meshconfigPath, 'utf8'), /"meshctl.dev\/local-socket"/);
  });

  it('replaces the socket file a SIGKILLed control plane left, on restart', async () => {
    await cp.kill();
    assert.ok(existsSync(socket), 'SIGKILL leaves the socket file');
    await assert.rejects(getOverSocket(socket, '/version', admin.token), /ECONNREFUSED/);
    cp = await spawnControlPlane({ dataDir });
    assert.equal(await getOverSocket(socket, '/apis/meshctl.dev/v1alpha1/nodes', admin.token), 200);
    assert.equal(statSync(socket).mode & 0o777, 0o600);
  });
});

/** Refuses to start on a socket another live process accepts on (never takes it over). */
describe('local API socket in use', () => {
  it('is not taken over: the control plane serves HTTPS only and its meshconfig names no socket', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-local-socket-busy-'));
    const socket = controlPlanePaths(dataDir).socket;
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `require('fs').mkdirSync(require('path').dirname(${JSON.stringify(socket)}), { recursive: true, mode: 0o700 });
require('net').createServer((c) => c.end()).listen(${JSON.stringify(socket)}, () => console.log('listening'))`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let cp: ControlPlaneProcess | undefined;
    try {
      await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
      cp = await spawnControlPlane({ dataDir });
      assert.match(cp.output(), /"msg":"Skipped local API socket".*another process serves/);
      assert.equal(loadMeshconfig(cp.meshconfigPath).socketPath, undefined);
    } finally {
      await cp?.stop();
      holder.kill('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
