// ADR 0053 end to end with real processes: the `mesh-control-plane` process and `mesh-agent` processes,
// asserting on files and processes on disk. The control plane going down is every node in the ordinary
// disconnected situation: services keep running, drift is still corrected, an agent restart cold-starts
// from its own store, and when the control plane returns the agents reconnect and report on their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../api/client/http-client.ts';
import { ApiError } from '../api/meta/api-error.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { Client } from '../api/client/types.ts';
import type { Module, ModuleResource } from '../api/v1alpha1/generated/module.ts';
import { spawnControlPlane, startServer, type ControlPlaneProcess } from '../test/harness.ts';
import { readAgentInfo } from './agent-info.ts';
import { memoryLogger } from './engine/testing.ts';
import { openAgentStore } from './store/agent-store.ts';
import {
  foreverCommand,
  freePort,
  killServices,
  metricValue,
  pidsWithTag,
  putDeclaration,
  runAgentUntilExit,
  servicePid,
  spawnAgent,
  waitFor,
  type AgentProcess,
} from './testing.ts';

/** Tags this run's services (in their argv), so teardown finds one an agent started but had not recorded yet. */
const TAG = `agent-process-test-${process.pid}-${Date.now().toString(36)}`;

/** The module's resources at version `v`; its service changes only from version 3 (see step 2 of the first test). */
const resources = (v: number): ModuleResource[] => [
  { id: 'dir', kind: 'Directory', spec: { path: '/srv/web' } },
  { id: 'conf', kind: 'File', spec: { path: '/srv/web/conf', content: `version=${v}\n` } },
  {
    id: 'server',
    kind: 'Service',
    spec: {
      driver: 'process',
      command: foreverCommand(`${TAG}-${v < 3 ? 1 : v}`),
      workingDirectory: '/srv/web',
    },
  },
];
const SERVER = 'web-on-a/server';

/** Applies Module `web` at version `v` (and, the first time, its Assignment to node `a`) as admin; the control plane renders the Declaration. */
async function applyModule(admin: Client, v: number): Promise<void> {
  const module: Module = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Module',
    metadata: { name: 'web' },
    spec: { version: `${v}.0.0`, resources: resources(v) },
  };
  try {
    const cur = await admin.get('modules', 'web');
    await admin.update('modules', {
      ...module,
      metadata: { name: 'web', resourceVersion: cur.metadata.resourceVersion },
    });
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== 404) throw e;
    await admin.create('modules', module);
    await admin.create('assignments', {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Assignment',
      metadata: { name: 'web-on-a' },
      spec: { module: 'web', node: 'a' },
    });
  }
}

/** The Declaration of node `a` once it holds version `v` of the module: its generation. */
async function declared(admin: Client, v: number): Promise<number> {
  return waitFor(
    async () => {
      const d = (await admin.get('declarations', 'a').catch(() => undefined)) as
        (KubeObject & { spec: { resources: Array<{ spec: { content?: string } }> } }) | undefined;
      return d?.spec.resources.some((r) => r.spec.content === `version=${v}\n`) && d.metadata.generation!;
    },
    15_000,
    `the declaration of version ${v}`,
  );
}

interface World {
  dir: string;
  stateDir: string;
  root: string;
  agents: AgentProcess[];
  cps: ControlPlaneProcess[];
}

function world(t: { after(fn: () => Promise<void>): void }): World {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-agent-e2e-'));
  const w: World = { dir, stateDir: join(dir, 'agent'), root: join(dir, 'root'), agents: [], cps: [] };
  mkdirSync(w.root);
  t.after(async () => {
    for (const a of w.agents) await a.kill('SIGKILL');
    for (const cp of w.cps) await cp.kill();
    killServices(w.stateDir);
    for (const pid of pidsWithTag(TAG)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return w;
}

const intervals = ['--reconcile-interval', '300ms', '--heartbeat-interval', '300ms'];
const scrape = async (a: AgentProcess, sample: string): Promise<number | undefined> =>
  metricValue(await (await fetch(`${a.metrics}/metrics`)).text(), sample);
const UNREACHABLE = 'meshagent_control_plane_unreachable_seconds';

test('ADR 0053: nodes keep running without the control plane, across an agent restart, and report when it returns', async (t) => {
  const w = world(t);
  const port = await freePort();
  const cpDir = join(w.dir, 'cp');
  w.cps.push(await spawnControlPlane({ dataDir: cpDir, listen: `127.0.0.1:${port}` }));
  const admin = createClient(w.cps[0].config);
  t.after(async () => admin.close());
  const conf = join(w.root, 'srv/web/conf');
  const status = async (plural: string): Promise<Record<string, any>> =>
    ((await admin.get(plural, 'a')) as KubeObject & { status?: any }).status ?? {};
  const applied = async (v: number) => {
    const g = await declared(admin, v);
    await waitFor(
      async () => (await status('declarations')).appliedGeneration === g,
      15_000,
      `version ${v} (generation ${g}) applied`,
    );
  };

  // 1. First start (name and credential given once), apply generation 1.
  w.agents.push(
    await spawnAgent([
      '--state-dir',
      w.stateDir,
      '--root',
      w.root,
      '--name',
      'a',
      '--config',
      w.cps[0].meshconfigPath,
      ...intervals,
    ]),
  );
  const info = await readAgentInfo(w.stateDir);
  assert.deepEqual([info.pid, info.node, info.metrics], [w.agents[0].pid, 'a', w.agents[0].metrics]);
  await applyModule(admin, 1);
  await applied(1);
  assert.equal(readFileSync(conf, 'utf8'), 'version=1\n');
  assert.ok(servicePid(w.stateDir, SERVER));

  // 2. A new generation is persisted in the agent's own store before it is acknowledged. (The SIGKILL lands
  // mid-reconcile; generation 2 leaves the service alone, since a kill between a service's spawn and its pid
  // file would leave a process no state dir records, which this test could not clean up by pid.)
  await applyModule(admin, 2);
  const g2 = await declared(admin, 2);
  await waitFor(async () => (await status('declarations')).observedGeneration === g2, 10_000, 'the acknowledgement');
  await w.agents[0].kill('SIGKILL');
  const store = await openAgentStore({ stateDir: w.stateDir, logger: memoryLogger() });
  assert.equal(
    store.declaration()?.object.metadata.generation,
    g2,
    'the acknowledged generation is in the agent store',
  );
  await store.close();
  w.agents.push(await spawnAgent(['--state-dir', w.stateDir, ...intervals]));
  await applied(2);
  assert.equal(readFileSync(conf, 'utf8'), 'version=2\n');
  const pid = servicePid(w.stateDir, SERVER)!;
  assert.ok(pid);

  // 3. SIGKILL the control plane: services keep running, drift is still corrected, the outage is measured.
  await w.cps[0].kill();
  const agent = w.agents[1];
  await waitFor(async () => (await scrape(agent, UNREACHABLE))! > 0, 10_000, 'the agent to notice');
  assert.equal(servicePid(w.stateDir, SERVER), pid, 'the service keeps running');
  rmSync(conf);
  await waitFor(() => readFileSync(conf, 'utf8') === 'version=2\n', 5000, 'the deleted file to come back');
  process.kill(pid, 'SIGKILL');
  const restarted = await waitFor(
    () => {
      const p = servicePid(w.stateDir, SERVER);
      return p !== pid && p;
    },
    10_000,
    'the service to be restarted',
  );
  const u1 = (await scrape(agent, UNREACHABLE))!;
  await new Promise((r) => setTimeout(r, 300));
  assert.ok((await scrape(agent, UNREACHABLE))! > u1, 'unreachable seconds grow');

  // 4. While it is still down, SIGKILL the agent, let the node drift, restart the agent: a cold start from its store.
  await agent.kill('SIGKILL');
  rmSync(conf);
  process.kill(restarted, 'SIGKILL');
  const cold = await spawnAgent(['--state-dir', w.stateDir, ...intervals]);
  w.agents.push(cold);
  assert.ok(
    cold.lines().find((l) => l.msg === 'Started agent')?.unreachableSince,
    'it remembers since when the control plane is unreachable',
  );
  await waitFor(
    () => readFileSync(conf, 'utf8') === 'version=2\n',
    10_000,
    'the file to be restored by the cold start',
  );
  await waitFor(
    () => {
      const p = servicePid(w.stateDir, SERVER);
      return p !== restarted && p;
    },
    10_000,
    'the service to run again',
  );
  assert.ok(
    (await scrape(cold, UNREACHABLE))! > u1,
    'the outage is counted from when it began, across the agent restart',
  );

  // 5. Restart the control plane on the same address: the agent reconnects and reports on its own; changes flow again.
  const back = Date.now();
  w.cps.push(await spawnControlPlane({ dataDir: cpDir, listen: `127.0.0.1:${port}` }));
  await waitFor(
    async () => Date.parse((await status('nodes')).controlPlaneLastContact) >= back,
    15_000,
    'a heartbeat after the return',
  );
  const reasons = await waitFor(
    async () => {
      const rs = ((await admin.list('events')).items as Array<{ reason?: string }>).map((e) => e.reason);
      return rs.includes('ControlPlaneUnreachable') && rs;
    },
    10_000,
    'the outbox to be delivered',
  );
  assert.ok(reasons.includes('DriftCorrected'), 'what happened during the outage is reported');
  assert.equal(await scrape(cold, UNREACHABLE), 0);
  await applyModule(admin, 3);
  await applied(3);
  assert.equal(readFileSync(conf, 'utf8'), 'version=3\n');

  // 6. SIGTERM: a clean exit that leaves the services running.
  const running = servicePid(w.stateDir, SERVER);
  assert.equal(await cold.kill('SIGTERM'), 0);
  assert.match(cold.output(), /"msg":"Stopped agent"/);
  assert.doesNotMatch(
    cold.output().split('"msg":"Stopping agent"')[1] ?? '',
    /Lost contact/,
    'its own shutdown is no outage',
  );
  assert.equal(servicePid(w.stateDir, SERVER), running);
});

test('a corrupt or truncated agent store stops the start with a clear error; nothing on the node is touched', async (t) => {
  const w = world(t);
  const server = await startServer({ insecure: true });
  t.after(() => server.stop());
  const admin = createClient(server.config);
  t.after(async () => admin.close());
  const agent = await spawnAgent([
    '--state-dir',
    w.stateDir,
    '--root',
    w.root,
    '--name',
    'a',
    '--config',
    server.meshconfigPath,
    ...intervals,
  ]);
  w.agents.push(agent);
  await putDeclaration(
    admin,
    'a',
    1,
    resources(1).map((r) => ({ ...r, id: `web-on-a/${r.id}`, owner: 'web-on-a' })),
  );
  await waitFor(
    async () =>
      ((await admin.get('declarations', 'a')) as { status?: { appliedGeneration?: number } }).status
        ?.appliedGeneration === 1,
  );
  const pid = servicePid(w.stateDir, SERVER);
  assert.equal(await agent.kill('SIGTERM'), 0);

  const storeDir = join(w.stateDir, 'store');
  const journal = join(
    storeDir,
    readdirSync(storeDir).find((f) => f.startsWith('journal-'))!,
  );
  const good = readFileSync(journal);
  const lines = good.toString('utf8').split('\n');
  lines[2] = '{"rv": 3, garbage';
  writeFileSync(journal, lines.join('\n'));
  const corrupt = await runAgentUntilExit(['run', '--state-dir', w.stateDir]);
  assert.equal(corrupt.code, 1, corrupt.output);
  assert.match(corrupt.output, /"msg":"Failed to start agent"/);
  assert.ok(corrupt.output.includes(`corrupt store journal ${journal}:3`), corrupt.output);

  writeFileSync(journal, good);
  truncateSync(journal, Math.floor(good.length / 2));
  const truncated = await runAgentUntilExit(['run', '--state-dir', w.stateDir]);
  assert.equal(truncated.code, 1, truncated.output);
  assert.match(truncated.output, /is truncated or was rolled back/);

  assert.equal(readFileSync(join(w.root, 'srv/web/conf'), 'utf8'), 'version=1\n', 'the managed file is still there');
  assert.equal(servicePid(w.stateDir, SERVER), pid, 'the service still runs');
});

test('mesh-agent: bad flags exit 2 with a clear message; --help exits 0', async () => {
  const bad = await runAgentUntilExit(['run', '--state-dir', '/nonexistent', '--reconcile-interval', 'often']);
  assert.equal(bad.code, 2);
  assert.match(
    bad.output,
    /^mesh-agent: --reconcile-interval must be a duration .* not "often"\n\nUsage: mesh-agent run/,
  );
  const help = await runAgentUntilExit(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.output, /--stop-services-on-exit/);
});
