// Issue 3's local mesh (`npm start` = hack/local-mesh.mjs) end to end: the real script over a private build
// of dist/ (see cli-harness.ts: parallel test files never share a dist/), MESHCTL_HOME in a temp dir.
// It prints `export MESHCONFIG=…` and `export KUBECONFIG=…`; meshctl and kubectl then list the three nodes;
// node-a serves the example route over HTTPS and the recovery clock is printed; the greeter writes on node-a (and not
// on node-c); killing the control plane stops no greeter; Enter starts it again and the agents reconnect;
// SIGTERM stops every process it started.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import { loadMeshconfig } from '../../api/client/meshconfig.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import { freePort, serviceRecords, servicePid, waitFor } from '../../agent/testing.ts';
import type { BuiltCli } from './cli-harness.ts';
import { buildLocalMeshDir, childrenOf, expectOutput, LOCAL_NODES, startLocalMesh } from './local-mesh-helpers.ts';
import { REPO_ROOT } from '../harness.ts';
import { logPath } from '../../agent/drivers/log-file.ts';
import { cmdline, isRunning, pidsWithTag } from './mesh-helpers.ts';
import { httpsGet } from './route-helpers.ts';
import { kubectlEnv } from './kubectl-helpers.ts';

let cli: BuiltCli & { dir: string };
before(async () => {
  cli = await buildLocalMeshDir();
});
after(() => cli?.cleanup());

/** Waits until every Node's status.controlPlaneLastContact (its agent's heartbeat) is at or after `since`. */
async function heartbeatsSince(meshconfig: string, since: string, t: { after(fn: () => void): void }): Promise<void> {
  const admin = createClient(loadMeshconfig(meshconfig));
  t.after(() => admin.close());
  await waitFor(
    async () => {
      const nodes = (await admin.list('nodes')).items as Array<
        KubeObject & { status?: { controlPlaneLastContact?: string } }
      >;
      return nodes.length === 3 && nodes.every((n) => (n.status?.controlPlaneLastContact ?? '') >= since);
    },
    15_000,
    'every agent to heartbeat to the restarted control plane',
  );
}

test('npm start: a local mesh of three nodes that survives its control plane being killed and stops cleanly', async (t) => {
  const mesh = await startLocalMesh(t, { cwd: cli.dir, listen: `127.0.0.1:${await freePort()}` });
  const { home, meshconfig, state } = mesh;
  assert.equal(meshconfig, join(home, 'control-plane', 'admin.meshconfig'));
  const cpPid = Number((await expectOutput(mesh, 'stdout', /kill -9 (\d+)/, 10_000))[1]);
  assert.match(
    cmdline(cpPid) ?? '',
    new RegExp(`mesh-control-plane\\.js --data-dir ${home}/control-plane `),
    'the printed pid is the control plane',
  );
  /** The NAME column of a `get nodes` table, sorted. */
  const nameColumn = (table: string): string[] => {
    const [header, ...rows] = table.trim().split('\n');
    assert.match(header ?? '', /^NAME\s/);
    return rows.map((row) => row.split(/\s+/)[0]).sort();
  };
  const names = async (): Promise<string[]> => {
    const r = await cli.run(['get', 'nodes'], { config: meshconfig });
    assert.equal(r.code, 0, r.stderr);
    return nameColumn(r.stdout);
  };
  assert.deepEqual(await names(), LOCAL_NODES, 'exactly the three nodes');
  // kubectl, pointed at it by the printed KUBECONFIG line (it does not read MESHCONFIG), lists them too.
  const kubeconfig = /^export KUBECONFIG=(.+)$/m.exec(mesh.stdout())?.[1];
  assert.equal(kubeconfig, meshconfig, `the KUBECONFIG line names the admin meshconfig:\n${mesh.stdout()}`);
  const kubectlHome = mkdtempSync(join(tmpdir(), 'meshctl-local-mesh-kubectl-'));
  t.after(() => rmSync(kubectlHome, { recursive: true, force: true }));
  const kubectl = spawnSync('kubectl', ['get', 'nodes'], {
    env: kubectlEnv(kubectlHome, { KUBECONFIG: kubeconfig ?? '' }),
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(kubectl.status, 0, `${kubectl.stdout}\n${kubectl.stderr}`);
  assert.deepEqual(nameColumn(kubectl.stdout), LOCAL_NODES, 'kubectl lists the three nodes');
  // The overlay: every node's address and key are printed, and why there are no interfaces.
  for (const n of LOCAL_NODES) {
    const row =
      mesh
        .stdout()
        .split('\n')
        .find((l) => l.startsWith(`${n} `)) ?? '';
    assert.match(row, / 100\.64\.\d+\.\d+ +[A-Za-z0-9+/]{43}=/, `${n}'s overlay address and key:\n${mesh.stdout()}`);
  }
  assert.match(mesh.stdout(), /no interface is created here:\nthe three agents share this machine's network namespace/);

  // The example route: node-a serves https://hello.mesh.test:8443 with a certificate from the mesh CA, and
  // npm start printed the recovery clock (meshctl status).
  const ca = readFileSync(join(home, 'control-plane', 'pki', 'ca.crt'), 'utf8');
  const hello = await httpsGet(8443, 'hello.mesh.test', ca);
  assert.equal(hello.status, 200);
  assert.match(hello.body, /^hello from https at /);
  assert.match(mesh.stdout(), /Outage budget: +\d+d/);
  // ... and the status page with a one-time sign-in link (meshctl dashboard --no-open).
  assert.match(mesh.stdout(), /^The status page: https:\/\/127\.0\.0\.1:\d+\/ui\/$/m);
  const link = /^ {2}https:\/\/127\.0\.0\.1:(\d+)(\/ui\/sign-in\?code=[\w-]+)$/m.exec(mesh.stdout());
  assert.ok(link, `no sign-in link in:\n${mesh.stdout()}`);
  const signIn = await httpsGet(Number(link[1]), '127.0.0.1', ca, link[2]);
  assert.equal(signIn.status, 303, 'the printed link signs in once');
  const script = await httpsGet(Number(link[1]), '127.0.0.1', ca, '/ui/control-plane.js');
  assert.equal(script.status, 200, 'the bundled control plane serves the page built into dist/web');
  // ... and each node's own page, served by its agent.
  const nodePage = /^ {2}node-a: (http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(mesh.stdout());
  assert.ok(nodePage, `no node page for node-a in:\n${mesh.stdout()}`);
  const view = (await (await fetch(`${nodePage[1]}status.json`)).json()) as { node?: string };
  assert.equal(view.node, 'node-a', "the printed node page is node-a's");
  assert.match(
    mesh.stdout(),
    /curl --cacert \S+ca\.crt --resolve hello\.mesh\.test:8443:127\.0\.0\.1 https:\/\/hello\.mesh\.test:8443\//,
  );

  // The greeter runs on node-a (and node-b), printing to its log file (the agent captures its output); node-c has none of it.
  const outLog = logPath(state('node-a'), 'greeter-on-node-a/service');
  const size = (): number => (existsSync(outLog) ? statSync(outLog).size : 0);
  const greeters = ['node-a', 'node-b'].map((n) => servicePid(state(n), `greeter-on-${n}/service`)!);
  assert.ok(
    greeters.every((p) => p && isRunning(p)),
    'a greeter runs on node-a and node-b',
  );
  const s0 = size();
  await waitFor(() => size() > s0, 6000, "the greeter's log to grow");
  assert.match(readFileSync(outLog, 'utf8'), /^hello from the greeter module, version 1\.0\.0 at \S+Z$/m);
  assert.deepEqual(readdirSync(join(home, 'nodes', 'node-c', 'root')), [], 'node-c has no greeter');
  assert.equal(servicePid(state('node-c'), 'greeter-on-node-c/service'), undefined);

  // Kill the control plane: the greeter keeps writing; meshctl says the API is unreachable.
  process.kill(cpPid, 'SIGKILL');
  await expectOutput(mesh, 'stderr', /control-plane stopped \(SIGKILL\)/, 5000);
  const s1 = size();
  await waitFor(() => size() > s1, 6000, "the greeter's log to keep growing without the control plane");
  assert.deepEqual(greeters.map(isRunning), [true, true]);
  const down = await cli.run(['get', 'nodes'], { config: meshconfig });
  assert.notEqual(down.code, 0);
  assert.match(down.stderr, /unreachable/);

  // Enter starts it again: meshctl works, and the agents find it on their own and report.
  const back = new Date().toISOString();
  mesh.enter();
  await expectOutput(mesh, 'stdout', /control-plane started again \(pid \d+\)\./, 20_000);
  assert.deepEqual(await names(), LOCAL_NODES, 'meshctl get nodes works again');
  await heartbeatsSince(meshconfig, back, t);
  for (const n of LOCAL_NODES)
    await expectOutput(mesh, 'stdout', new RegExp(`^${n}: Reconnected to control plane`, 'm'), 5000);

  // SIGTERM: exit 0, and every process it started is gone (agents stop their services: --stop-services-on-exit).
  const started = childrenOf(mesh.pid);
  assert.equal(
    started.length,
    4,
    `the control plane and three agents run under it: ${started.map(cmdline).join('\n')}`,
  );
  process.kill(mesh.pid, 'SIGTERM');
  assert.equal(await mesh.exited, 0, mesh.output());
  await waitFor(
    () => [...started, ...greeters].every((p) => !isRunning(p)),
    10_000,
    'every child and greeter to be gone',
  );
  assert.deepEqual(pidsWithTag(home), [], 'nothing of this mesh runs any more');
});

// With MESHCTL_LISTEN port 0, Enter must start the control plane again on the port it first got: each agent
// keeps the server URL it stored at its first start (a new free port would leave them unable to reach it).
test('npm start with MESHCTL_LISTEN port 0: after Enter restarts the control plane, the agents reach it again', async (t) => {
  const mesh = await startLocalMesh(t, { cwd: cli.dir, listen: '127.0.0.1:0' });
  // The hint comes a few lines after the MESHCONFIG line startLocalMesh waited for, maybe in a later chunk.
  process.kill(Number((await expectOutput(mesh, 'stdout', /kill -9 (\d+)/, 10_000))[1]), 'SIGKILL');
  await expectOutput(mesh, 'stderr', /control-plane stopped \(SIGKILL\)/, 5000);
  const back = new Date().toISOString();
  mesh.enter();
  await expectOutput(mesh, 'stdout', /control-plane started again \(pid \d+\)\./, 20_000);
  await heartbeatsSince(mesh.meshconfig, back, t);
});

// Issue 8: a second `npm start` in the same MESHCTL_HOME names the running one; after `kill -9` of an agent,
// Ctrl-C still stops that agent's services (by the pid records its supervisor kept) and says which.
test('npm start: a second start is refused naming the first; Ctrl-C after kill -9 of an agent stops its services too', async (t) => {
  const mesh = await startLocalMesh(t, { cwd: cli.dir, listen: `127.0.0.1:${await freePort()}` });
  const env: NodeJS.ProcessEnv = { ...process.env, MESHCTL_HOME: mesh.home, MESHCTL_LISTEN: '127.0.0.1:0' };
  delete env.MESHCONFIG;
  const second = spawnSync(process.execPath, [join(REPO_ROOT, 'hack', 'local-mesh.mjs')], {
    cwd: cli.dir,
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(second.status, 1, `${second.stdout}\n${second.stderr}`);
  assert.match(second.stderr, new RegExp(`a local mesh is already running in ${mesh.home} \\(pid ${mesh.pid}\\)`));
  assert.doesNotMatch(second.stderr, /lock/);

  const services = LOCAL_NODES.flatMap((n) =>
    serviceRecords(mesh.state(n)).map((r) => ({ node: n, id: r.id, pid: r.pid })),
  );
  assert.deepEqual(services.map((s) => s.id).sort(), [
    'greeter-on-node-a/service',
    'greeter-on-node-b/service',
    'hello-web-on-node-a/service',
  ]);
  assert.ok(services.every((s) => isRunning(s.pid)));
  const agentA = (JSON.parse(readFileSync(join(mesh.state('node-a'), 'agent.json'), 'utf8')) as { pid: number }).pid;
  process.kill(agentA, 'SIGKILL');
  await expectOutput(mesh, 'stderr', /node-a stopped \(SIGKILL\)/, 5000);
  assert.ok(isRunning(services.find((s) => s.node === 'node-a')!.pid), 'its greeter runs on without the agent');

  process.kill(mesh.pid, 'SIGINT');
  assert.equal(await mesh.exited, 0, mesh.output());
  await waitFor(() => services.every((s) => !isRunning(s.pid)), 10_000, 'every recorded service to be gone');
  const a = services.find((s) => s.node === 'node-a')!;
  assert.match(mesh.stdout(), new RegExp(`^Stopped greeter-on-node-a/service on node-a \\(pid ${a.pid}\\)`, 'm'));
  assert.deepEqual(pidsWithTag(mesh.home), [], 'nothing of this mesh runs any more');
  assert.equal(existsSync(join(mesh.home, 'local-mesh.pid')), false, 'the pid file is removed');
});
