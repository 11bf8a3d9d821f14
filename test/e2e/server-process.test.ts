// The mesh-control-plane process: first start, HTTPS with its own CA, admin.meshconfig, clean SIGTERM,
// restart on the same data dir, and flag checking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { httpRequest, openStream, REPO_ROOT, spawnControlPlane, type EventStream } from '../harness.ts';
import { createClient } from '../../api/client/http-client.ts';

const API = '/apis/meshctl.dev/v1alpha1';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-process-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function runMain(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'controllers/main.ts', ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('first start serves HTTPS with a 0600 admin.meshconfig; SIGTERM exits 0; a restart keeps objects and token', async (t) => {
  const dataDir = tempDir(t);
  const first = await spawnControlPlane({ dataDir });
  let stopped = false;
  t.after(async () => {
    if (!stopped) await first.kill();
  });
  assert.match(first.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(statSync(first.meshconfigPath).mode & 0o777, 0o600);
  assert.equal(first.config.server, first.url);
  assert.match(first.config.caData ?? '', /BEGIN CERTIFICATE/);
  const v = await httpRequest(first.config, 'GET', '/version');
  assert.equal(v.status, 200);
  assert.equal((await httpRequest({ ...first.config, token: 'wrong' }, 'GET', `${API}/nodes`)).status, 401);
  const c = await httpRequest(first.config, 'POST', `${API}/nodes`, {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'kept' },
    spec: { site: 'home' },
  });
  assert.equal(c.status, 201, c.text);
  assert.equal(await first.stop(), 0);
  stopped = true;
  assert.match(first.output(), /"msg":"Stopped"/);

  const second = await spawnControlPlane({ dataDir });
  try {
    assert.equal(second.config.token, first.config.token);
    assert.equal(second.config.caData, first.config.caData);
    assert.equal(second.config.server, second.url, 'the meshconfig follows the new port');
    const got = await httpRequest(second.config, 'GET', `${API}/nodes/kept`);
    // The node controller writes the Node's status (Reachable Unknown: no agent), so compare what was created.
    const created = c.json as { metadata: { uid: string; creationTimestamp: string }; spec: unknown };
    assert.equal(got.json.metadata.uid, created.metadata.uid);
    assert.equal(got.json.metadata.creationTimestamp, created.metadata.creationTimestamp);
    assert.deepEqual(got.json.spec, created.spec);
    assert.doesNotMatch(second.output(), /Generated admin token|Created CA|Issued serving certificate/);
  } finally {
    assert.equal(await second.stop(), 0);
  }
});

/** One request over a new TLS connection offering `session`: whether it was resumed, and the session it left. */
function tlsExchange(port: number, ca: string, session?: Buffer): Promise<{ reused: boolean; session?: Buffer }> {
  return new Promise((resolve, reject) => {
    let reused = false;
    let latest: Buffer | undefined;
    const socket = connect({ host: '127.0.0.1', port, ca, session }, () => {
      reused = socket.isSessionReused();
      socket.write('GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    });
    socket.on('session', (s: Buffer) => (latest = s));
    socket.on('data', () => undefined);
    socket.once('error', reject);
    socket.once('close', () => resolve({ reused, session: latest }));
  });
}

test('a restarted control plane resumes its clients’ TLS sessions: the ticket key is kept in its data dir', async (t) => {
  const dataDir = tempDir(t);
  const first = await spawnControlPlane({ dataDir });
  const port = Number(new URL(first.url).port);
  const ca = first.config.caData ?? '';
  const before = await tlsExchange(port, ca);
  assert.equal(before.reused, false);
  assert.ok(before.session, 'the control plane issued a session ticket');
  await first.kill();
  const second = await spawnControlPlane({ dataDir, listen: `127.0.0.1:${port}` });
  try {
    assert.equal((await tlsExchange(port, ca, before.session)).reused, true);
  } finally {
    assert.equal(await second.stop(), 0);
  }
});

test('a second control plane on the same data dir refuses to start', async (t) => {
  const dataDir = tempDir(t);
  const cp = await spawnControlPlane({ dataDir, insecure: true });
  try {
    assert.match(cp.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(cp.config.caData, undefined);
    assert.equal((await httpRequest(cp.config, 'GET', `${API}/nodes`)).status, 200);
    const again = runMain(['--data-dir', dataDir, '--listen', '127.0.0.1:0', '--insecure-http']);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /Failed to start/);
  } finally {
    assert.equal(await cp.stop(), 0);
  }
});

test('a control plane started on an empty data dir serves the Mesh singleton with the defaults; it cannot be deleted and a restart keeps it', async (t) => {
  const dataDir = tempDir(t);
  const first = await spawnControlPlane({ dataDir, insecure: true });
  let mesh: { metadata: { uid: string; generation: number; creationTimestamp: string }; spec: unknown };
  try {
    const got = await httpRequest(first.config, 'GET', `${API}/meshes/mesh`);
    assert.equal(got.status, 200, got.text);
    mesh = got.json;
    assert.deepEqual(mesh.spec, {}, 'every setting is its default');
    assert.match(first.output(), /"msg":"Created Mesh"/);
    const del = await httpRequest(first.config, 'DELETE', `${API}/meshes/mesh`);
    assert.equal(del.status, 403, del.text);
    assert.match(del.json.message, /the Mesh is the singleton every mesh has/);
  } finally {
    assert.equal(await first.stop(), 0);
  }
  const second = await spawnControlPlane({ dataDir, insecure: true });
  try {
    const again = await httpRequest(second.config, 'GET', `${API}/meshes/mesh`);
    assert.equal(again.json.metadata.uid, mesh.metadata.uid);
    // Left alone: the same object, spec and generation (controllers keep its status, the recovery clock among them).
    const { generation, creationTimestamp } = again.json.metadata;
    assert.deepEqual(
      { generation, creationTimestamp, spec: again.json.spec },
      { generation: mesh.metadata.generation, creationTimestamp: mesh.metadata.creationTimestamp, spec: mesh.spec },
      'an existing Mesh is left alone',
    );
    assert.doesNotMatch(second.output(), /"msg":"Created Mesh"/);
  } finally {
    assert.equal(await second.stop(), 0);
  }
});

test('--max-watches-per-client bounds open watches: one more gets 429 with Retry-After; a bad value exits 2', async () => {
  // The in-process controllers watch as the admin too, so the admin's own watches reach the cap sooner.
  const cp = await spawnControlPlane({ insecure: true, args: ['--max-watches-per-client', '20'] });
  const open: EventStream[] = [];
  try {
    let refused: EventStream | undefined;
    while (!refused && open.length <= 20) {
      const w = await openStream(cp.config, `${API}/nodes?watch=1`);
      if (w.status === 200) open.push(w);
      else refused = w;
    }
    assert.ok(refused, 'a watch over the cap was refused');
    assert.ok(open.length >= 1 && open.length < 20, `${open.length} opened before the cap`);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    await refused.ended;
    assert.match(refused.raw(), /"reason":"TooManyRequests"/);
    assert.equal((await httpRequest(cp.config, 'GET', `${API}/nodes`)).status, 200, 'other requests are served');
  } finally {
    for (const w of open) w.close();
    assert.equal(await cp.stop(), 0);
  }
  const bad = runMain(['--max-requests-inflight', '0']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--max-requests-inflight must be a positive integer, not "0"/);
});

test('--insecure-http is refused off loopback; bad flags exit 2; --help prints usage', (t) => {
  const dataDir = tempDir(t);
  const insecure = runMain(['--data-dir', dataDir, '--listen', '0.0.0.0:0', '--insecure-http']);
  assert.equal(insecure.status, 2);
  assert.match(insecure.stderr, /--insecure-http .* allowed only on a loopback address .* not "0\.0\.0\.0"/);
  const bogus = runMain(['--bogus']);
  assert.equal(bogus.status, 2);
  assert.match(bogus.stderr, /Unknown option '--bogus'/);
  const listen = runMain(['--listen', 'nonsense']);
  assert.equal(listen.status, 2);
  assert.match(listen.stderr, /--listen must be HOST:PORT/);
  const help = runMain(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: mesh-control-plane/);
  assert.throws(() => readFileSync(join(dataDir, 'admin.meshconfig')), /ENOENT/, 'nothing was written');
});

test('the controllers reach the API in process: the control plane holds no connection to itself, and they still work', async (t) => {
  const cp = await spawnControlPlane();
  t.after(() => cp.stop());
  const port = new URL(cp.url).port;
  // The controllers are at work: the Declaration controller renders a Node's Declaration.
  // Over TCP, not the local socket the admin meshconfig names: ss (below) then sees this client's connection.
  const admin = createClient({ ...cp.config, socketPath: undefined });
  t.after(() => admin.close());
  await admin.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'n1' }, spec: {} });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const got = await admin.get('declarations', 'n1').catch(() => undefined);
    if (got) break;
    assert.ok(Date.now() < deadline, 'the Declaration controller rendered n1 within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  // Every established socket of the process (ss shows the owner of each): none goes out to the API's own port.
  const sockets = spawnSync('ss', ['-tnpH', 'state', 'established'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l.includes(`pid=${cp.pid},`));
  const outgoing = sockets.filter((l) => l.trim().split(/\s+/)[3]?.endsWith(`:${port}`));
  assert.deepEqual(outgoing, [], `the control plane's own connections to :${port}`);
  assert.ok(sockets.length > 0, 'ss lists the sockets the test client holds to the control plane');
});
