// Issue 8, "Done when" 1: the README's tutorial ("The local mesh (`npm start`)") walked as written, with the
// commands and paths it names, asserting at each step what it says a user sees: npm start; meshctl get nodes,
// get assignments, describe assignment, logs; kill -9 the control plane; the greeter's log keeps growing; its
// greeting file comes back; a killed greeter is restarted; an agent killed and started again with Enter
// cold-starts while the control plane stays down; Enter again brings the control plane back; a version bump
// applied from a copy of the examples rolls node-a and node-b (a new generation, the greeter restarted with the
// new version) and leaves node-c alone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, metricValue, waitFor } from '../../agent/testing.ts';
import type { BuiltCli, CliResult } from './cli-harness.ts';
import { buildLocalMeshDir, expectOutput, LOCAL_NODES, startLocalMesh, type LocalMesh } from './local-mesh-helpers.ts';
import { isRunning } from './mesh-helpers.ts';

let cli: BuiltCli & { dir: string };
before(async () => {
  cli = await buildLocalMeshDir();
});
after(() => cli?.cleanup());

/** The README's paths, under MESHCTL_HOME instead of .meshctl/local. */
function paths(home: string) {
  const nodeA = join(home, 'nodes', 'node-a');
  return {
    greeterLog: join(nodeA, 'state', 'logs', 'greeter-on-node-a%2Fservice.log'),
    greeterPidFile: join(nodeA, 'state', 'services', 'greeter-on-node-a%2Fservice.json'),
    greeting: join(nodeA, 'root', 'srv', 'greeter', 'greeting.txt'),
    agentJson: (node: string) => join(home, 'nodes', node, 'state', 'agent.json'),
  };
}

const readJson = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
const sizeOf = (file: string): number => (existsSync(file) ? statSync(file).size : 0);

/** `meshctl …` after `export MESHCONFIG=…`, as the README has it; fails on a non-zero exit. */
async function meshctl(mesh: LocalMesh, args: string[], ok = true): Promise<CliResult> {
  const r = await cli.run(args, { env: { MESHCONFIG: mesh.meshconfig } });
  if (ok) assert.equal(r.code, 0, `meshctl ${args.join(' ')}: ${r.stderr}`);
  return r;
}

/** `meshctl get` as rows of whitespace-separated cells (no cell of these tables holds a space), by NAME. */
async function table(mesh: LocalMesh, kind: string): Promise<Map<string, string[]>> {
  const [, ...rows] = (await meshctl(mesh, ['get', kind])).stdout.trim().split('\n');
  return new Map(rows.map((r) => r.split(/\s+/)).map((cells) => [cells[0], cells]));
}

/** node → [DESIRED, APPLIED, DECLARATION] from `meshctl get nodes` (NAME SITE REACHABLE LAST SEEN DESIRED …). */
async function generations(mesh: LocalMesh): Promise<Record<string, [number, number, string]>> {
  const rows = await table(mesh, 'nodes');
  return Object.fromEntries([...rows].map(([n, c]) => [n, [Number(c[4]), Number(c[5]), c[6]] as const]));
}

const greeterPid = (file: string): number => readJson(file).pid as number;

async function appliedMessage(mesh: LocalMesh, assignment: string): Promise<string> {
  const out = (await meshctl(mesh, ['describe', 'assignment', assignment])).stdout;
  return /^\s+Applied\s+(True|False)\s+\S+\s+\S+\s+(.*)$/m.exec(out)?.slice(1).join(' ') ?? out;
}

test('the README tutorial as written: outage, drift, an agent cold start, the return, and a version rollout', async (t) => {
  const mesh = await startLocalMesh(t, { cwd: cli.dir, listen: `127.0.0.1:${await freePort()}` });
  const p = paths(mesh.home);

  // meshctl get nodes / get assignments / describe / logs.
  const g0 = await generations(mesh);
  assert.deepEqual(Object.keys(g0).sort(), LOCAL_NODES);
  for (const n of LOCAL_NODES) assert.equal(g0[n][0], g0[n][1], `${n}: DESIRED = APPLIED`);
  for (const n of LOCAL_NODES) assert.equal(g0[n][2], 'Applied');
  const asg = await table(mesh, 'assignments');
  assert.deepEqual([...asg.keys()], ['greeter-on-node-a', 'greeter-on-node-b', 'hello-web-on-node-a']);
  for (const [name, cells] of asg) assert.deepEqual(cells.slice(3, 5), ['1.0.0', 'True'], name);
  assert.equal(
    await appliedMessage(mesh, 'greeter-on-node-a'),
    'True node "node-a" applied all 3 resources of version 1.0.0',
  );
  await waitFor(
    async () =>
      /^hello from the greeter module, version 1\.0\.0 at \S+Z$/m.test(
        (await meshctl(mesh, ['logs', 'node-a', 'greeter-on-node-a/service'])).stdout,
      ),
    10_000,
    "the greeter's lines in meshctl logs node-a",
  );

  // Kill the control plane: meshctl says it is unreachable; the greeter's log keeps growing.
  const cpPid = Number((await expectOutput(mesh, 'stdout', /kill -9 (\d+)/, 1000))[1]);
  process.kill(cpPid, 'SIGKILL');
  await expectOutput(mesh, 'stderr', /control-plane stopped \(SIGKILL\)/, 5000);
  const down = await meshctl(mesh, ['get', 'nodes'], false);
  assert.notEqual(down.code, 0);
  assert.match(down.stderr, /unreachable/);
  const s0 = sizeOf(p.greeterLog);
  await waitFor(() => sizeOf(p.greeterLog) > s0, 10_000, "the greeter's log to keep growing");

  // Delete greeting.txt: it comes back. Kill the greeter: it is restarted.
  rmSync(p.greeting);
  await waitFor(() => existsSync(p.greeting), 10_000, 'greeting.txt to come back');
  assert.equal(readFileSync(p.greeting, 'utf8'), 'hello from the greeter module\n');
  const greeter0 = greeterPid(p.greeterPidFile);
  process.kill(greeter0, 'SIGKILL');
  const greeter1 = await waitFor(
    () => {
      const pid = greeterPid(p.greeterPidFile);
      return pid !== greeter0 && isRunning(pid) && pid;
    },
    10_000,
    'the greeter to be restarted',
  );

  // The agent's metrics: meshagent_control_plane_unreachable_seconds grows.
  const metricsUrl = readJson(p.agentJson('node-a')).metrics as string;
  const unreachable = async (): Promise<number> =>
    metricValue(await (await fetch(`${metricsUrl}/metrics`)).text(), 'meshagent_control_plane_unreachable_seconds') ??
    0;
  const u0 = await waitFor(async () => (await unreachable()) > 0 && unreachable(), 10_000, 'the outage metric');
  await waitFor(async () => (await unreachable()) > u0, 10_000, 'the outage metric to grow');

  // Restart an agent while the control plane is down: kill -9 it, Enter; it cold-starts from its store.
  const agentPid = readJson(p.agentJson('node-a')).pid as number;
  process.kill(agentPid, 'SIGKILL');
  await expectOutput(mesh, 'stderr', /node-a stopped \(SIGKILL\)/, 5000);
  rmSync(p.greeting);
  mesh.enter();
  const restarted = Number((await expectOutput(mesh, 'stdout', /node-a started again \(pid (\d+)\)\./, 20_000))[1]);
  await expectOutput(mesh, 'stdout', /The control plane is still down; press Enter again to start it\./, 5000);
  assert.equal(readJson(p.agentJson('node-a')).pid, restarted);
  await waitFor(() => existsSync(p.greeting), 10_000, 'the cold-started agent to put greeting.txt back');
  assert.equal(greeterPid(p.greeterPidFile), greeter1, 'the greeter kept running: the new agent adopted it');
  assert.ok(isRunning(greeter1));
  assert.notEqual((await meshctl(mesh, ['get', 'nodes'], false)).code, 0, 'the control plane is still down');

  // Bring the control plane back (Enter again): meshctl works, and every agent reports on its own.
  const back = new Date().toISOString();
  mesh.enter();
  await expectOutput(mesh, 'stdout', /control-plane started again \(pid \d+\)\./, 20_000);
  await waitFor(
    async () => {
      const nodes = JSON.parse((await meshctl(mesh, ['get', 'nodes', '-o', 'json'])).stdout) as {
        items: Array<{ status?: { controlPlaneLastContact?: string } }>;
      };
      return nodes.items.length === 3 && nodes.items.every((n) => (n.status?.controlPlaneLastContact ?? '') >= back);
    },
    20_000,
    'every agent to report to the control plane again',
  );

  await rollout(mesh, p, g0);
});

/** The README's last step: bump `version` in a copy of the examples, apply it, and watch node-a and node-b roll. */
async function rollout(
  mesh: LocalMesh,
  p: ReturnType<typeof paths>,
  g0: Record<string, [number, number, string]>,
): Promise<void> {
  const before = await generations(mesh);
  const greeters = ['node-a', 'node-b'].map((n) =>
    greeterPid(join(mesh.home, 'nodes', n, 'state', 'services', `greeter-on-${n}%2Fservice.json`)),
  );
  // mkdir -p /tmp/examples && sed 's/^  version: 1.0.0$/  version: 1.1.0/' manifests/examples/greeter.yaml > …
  const copy = mkdtempSync(join(tmpdir(), 'meshctl-tutorial-examples-'));
  try {
    const original = readFileSync(join(cli.dir, 'manifests', 'examples', 'greeter.yaml'), 'utf8');
    const bumped = original.replace(/^ {2}version: 1\.0\.0$/m, '  version: 1.1.0');
    assert.notEqual(bumped, original, 'the sed line matches the example');
    writeFileSync(join(copy, 'greeter.yaml'), bumped);
    const applied = await meshctl(mesh, ['apply', '-f', `${copy}/`]);
    assert.equal(
      applied.stdout,
      'module/greeter configured\nassignment/greeter-on-node-a unchanged\nassignment/greeter-on-node-b unchanged\n',
    );
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  const rolled = await waitFor(
    async () => {
      const g = await generations(mesh);
      const done = ['node-a', 'node-b'].every((n) => g[n][0] === before[n][0] + 1 && g[n][1] === g[n][0]);
      return done && g;
    },
    20_000,
    'node-a and node-b to apply a new generation',
  );
  assert.deepEqual(rolled['node-c'], g0['node-c'], 'node-c is left alone');
  assert.deepEqual(readdirSync(join(mesh.home, 'nodes', 'node-c', 'root')), []);
  const asg = await table(mesh, 'assignments');
  for (const name of ['greeter-on-node-a', 'greeter-on-node-b'])
    assert.deepEqual(asg.get(name)?.slice(3, 5), ['1.1.0', 'True'], name);
  assert.equal(
    await appliedMessage(mesh, 'greeter-on-node-a'),
    'True node "node-a" applied all 3 resources of version 1.1.0',
  );
  const now = ['node-a', 'node-b'].map((n) =>
    greeterPid(join(mesh.home, 'nodes', n, 'state', 'services', `greeter-on-${n}%2Fservice.json`)),
  );
  for (const [i, pid] of now.entries()) assert.notEqual(pid, greeters[i], 'the greeter was restarted');
  await waitFor(
    async () => {
      const log = (await meshctl(mesh, ['logs', 'node-a', 'greeter-on-node-a/service'])).stdout;
      return /^--- \S+ starting .*\n(?:.*\n)*?hello from the greeter module, version 1\.1\.0 at \S+Z$/m.test(log);
    },
    10_000,
    'the restarted greeter printing version 1.1.0 in meshctl logs node-a',
  );
  assert.ok(existsSync(p.greeterLog));
}
