// The in-process agent against the real API server (startServer): what it does on disk and what it
// reports. The agent-process tests (agent-process.test.ts) cover the control plane going away.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../api/client/http-client.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { DeclaredResource } from '../api/v1alpha1/generated/declaration.ts';
import { startServer, type TestServer } from '../test/harness.ts';
import { createAgent, type Agent, type AgentOptions } from './agent.ts';
import { memoryLogger } from './engine/testing.ts';
import { foreverCommand, killServices, metricValue, putDeclaration, servicePid, waitFor } from './testing.ts';

interface Env {
  dir: string;
  stateDir: string;
  root: string;
  server: TestServer;
  admin: ReturnType<typeof createClient>;
  agents: Agent[];
}

async function setup(t: { after(fn: () => Promise<void> | void): void }): Promise<Env> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-agent-'));
  const stateDir = join(dir, 'state');
  const root = join(dir, 'root');
  mkdirSync(root);
  const server = await startServer({ insecure: true });
  const admin = createClient(server.config);
  const env: Env = { dir, stateDir, root, server, admin, agents: [] };
  t.after(async () => {
    for (const a of env.agents) await a.stop().catch(() => {});
    killServices(stateDir);
    admin.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return env;
}

function agentFor(env: Env, extra: Partial<AgentOptions> = {}): Agent {
  const agent = createAgent({
    stateDir: env.stateDir,
    reconcileIntervalMs: 200,
    heartbeatIntervalMs: 200,
    logger: memoryLogger(),
    supervisor: { backoff: { initialMs: 50 }, pollMs: 50, stopGraceMs: 1000 },
    ...extra,
  });
  env.agents.push(agent);
  return agent;
}

const status = async (env: Env, plural: string, name: string): Promise<Record<string, any>> =>
  ((await env.admin.get(plural, name)) as KubeObject & { status?: Record<string, any> }).status ?? {};
const appliedGeneration = (env: Env, g: number) =>
  waitFor(
    async () => (await status(env, 'declarations', 'a')).appliedGeneration === g,
    10_000,
    `generation ${g} applied`,
  );

const v1: DeclaredResource[] = [
  { id: 'web/dir', owner: 'web', kind: 'Directory', spec: { path: '/srv/web' } },
  { id: 'web/conf', owner: 'web', kind: 'File', spec: { path: '/srv/web/conf', content: 'v=1\n', mode: '0640' } },
  {
    id: 'web/server',
    owner: 'web',
    kind: 'Service',
    spec: { command: foreverCommand('agent-test-v1'), workingDirectory: '/srv/web' },
  },
];
const v2: DeclaredResource[] = [
  { id: 'web2/dir', owner: 'web2', kind: 'Directory', spec: { path: '/srv/web2' } },
  { id: 'web2/conf', owner: 'web2', kind: 'File', spec: { path: '/srv/web2/conf', content: 'v=2\n' } },
  {
    id: 'web2/server',
    owner: 'web2',
    kind: 'Service',
    spec: { command: foreverCommand('agent-test-v2'), workingDirectory: '/srv/web2' },
  },
];

test('agent: applies its Declaration on disk, creates its Node, reports status, heartbeats and events', async (t) => {
  const env = await setup(t);
  const agent = agentFor(env, { nodeName: 'a', root: env.root, site: 'home', connection: env.server.config });
  const info = await agent.start();
  assert.match(info.metrics ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
  await waitFor(() => env.admin.get('nodes', 'a'), 5000, 'the Node to be created');
  assert.deepEqual((await env.admin.get('nodes', 'a')).spec, { site: 'home' });

  const created = await putDeclaration(env.admin, 'a', 1, v1);
  await appliedGeneration(env, 1);
  assert.equal(readFileSync(join(env.root, 'srv/web/conf'), 'utf8'), 'v=1\n');
  assert.ok(servicePid(env.stateDir, 'web/server'), 'the service process runs');
  const s = await status(env, 'declarations', 'a');
  assert.equal(s.observedGeneration, created.metadata.generation);
  assert.deepEqual(s.results, [
    { id: 'web/dir', state: 'Applied' },
    { id: 'web/conf', state: 'Applied' },
    { id: 'web/server', state: 'Applied' },
  ]);
  assert.deepEqual(
    s.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`),
    ['Applied=True', 'Ready=True'],
  );

  const node = await waitFor(async () => {
    const n = await status(env, 'nodes', 'a');
    return n.declaration?.appliedGeneration === 1 && n;
  });
  assert.equal(node.declaration.desiredGeneration, undefined, "desired is the control plane's to write");
  assert.equal(node.agentVersion, '0.1.0');
  assert.ok(Date.now() - Date.parse(node.controlPlaneLastContact) < 5000);
  assert.equal(node.lastSeen, undefined, "lastSeen is the control plane's clock, not the agent's");
  const events = await waitFor(async () => {
    const items = (await env.admin.list('events')).items as Array<
      KubeObject & { reason?: string; involvedObject?: { name: string } }
    >;
    return items.find((e) => e.reason === 'Applied') && items;
  });
  assert.equal(events.find((e) => e.reason === 'Applied')?.involvedObject?.name, 'a');

  rmSync(join(env.root, 'srv/web/conf'));
  await waitFor(() => existsSync(join(env.root, 'srv/web/conf')), 5000, 'drift: the deleted file to come back');
  const pid = servicePid(env.stateDir, 'web/server')!;
  process.kill(pid, 'SIGKILL');
  await waitFor(
    () => {
      const p = servicePid(env.stateDir, 'web/server');
      return p !== pid && p;
    },
    5000,
    'drift: the killed service to run again',
  );
  await waitFor(
    async () =>
      ((await env.admin.list('events')).items as Array<{ reason?: string }>).some((e) => e.reason === 'DriftCorrected'),
    5000,
    'a DriftCorrected event',
  );

  const metrics = await (await fetch(`${info.metrics}/metrics`)).text();
  assert.equal(metricValue(metrics, 'meshagent_owned_resources'), 3);
  assert.equal(metricValue(metrics, 'meshagent_declaration_generation{state="applied"}'), 1);
  assert.ok(metricValue(metrics, 'meshagent_reconciles_total{result="success"}')! >= 1);
  assert.equal(metricValue(metrics, 'meshagent_control_plane_unreachable_seconds'), 0);
  assert.equal((await fetch(`${info.metrics}/healthz`)).status, 200);
});

test('agent: a new version converges, removing what the old one owned and leaving unowned files alone', async (t) => {
  const env = await setup(t);
  const agent = agentFor(env, { nodeName: 'a', root: env.root, connection: env.server.config });
  await agent.start();
  await putDeclaration(env.admin, 'a', 1, v1);
  await appliedGeneration(env, 1);
  const oldPid = servicePid(env.stateDir, 'web/server')!;
  writeFileSync(join(env.root, 'srv/web/notes.txt'), 'a person wrote this');

  await putDeclaration(env.admin, 'a', 2, v2);
  await appliedGeneration(env, 2);
  assert.equal(readFileSync(join(env.root, 'srv/web2/conf'), 'utf8'), 'v=2\n');
  assert.ok(servicePid(env.stateDir, 'web2/server'));
  assert.equal(servicePid(env.stateDir, 'web/server'), undefined);
  await waitFor(
    () => !existsSync(`/proc/${oldPid}`) || readFileSync(`/proc/${oldPid}/stat`, 'utf8').includes(') Z '),
    5000,
    'the old service to stop',
  );
  assert.equal(existsSync(join(env.root, 'srv/web/conf')), false, 'the old file was removed');
  assert.equal(
    readFileSync(join(env.root, 'srv/web/notes.txt'), 'utf8'),
    'a person wrote this',
    'an unowned file is left alone',
  );
  assert.ok(existsSync(join(env.root, 'srv/web')), 'its non-empty directory is retained');
  assert.deepEqual(
    (await status(env, 'declarations', 'a')).results.map((r: { id: string }) => r.id),
    ['web2/dir', 'web2/conf', 'web2/server'],
  );
});

test('agent: a File whose certificate is not issued yet is Waiting, and so is what depends on it; not a failure', async (t) => {
  const env = await setup(t);
  const agent = agentFor(env, { nodeName: 'a', root: env.root, connection: env.server.config });
  await agent.start();
  await putDeclaration(env.admin, 'a', 1, [
    { id: 'tls/dir', owner: 'tls', kind: 'Directory', spec: { path: '/tls' } },
    {
      id: 'tls/cert',
      owner: 'tls',
      kind: 'File',
      spec: { path: '/tls/cert.pem', contentFrom: { certificate: 'web', key: 'cert' } },
    },
    {
      id: 'tls/after',
      owner: 'tls',
      kind: 'File',
      spec: { path: '/tls/after', content: 'x' },
      dependsOn: ['tls/cert'],
    },
    { id: 'other/file', owner: 'other', kind: 'File', spec: { path: '/other', content: 'o' } },
  ]);
  const s = await waitFor(async () => {
    const st = await status(env, 'declarations', 'a');
    return st.results?.[1]?.state === 'Waiting' && st;
  });
  assert.match(s.results[1].message, /File \/tls\/cert.pem waits for the cert of certificate "web"/);
  assert.deepEqual(
    s.results.map((r: { state: string }) => r.state),
    ['Applied', 'Waiting', 'Waiting', 'Applied'],
  );
  assert.equal(s.appliedGeneration, undefined);
  assert.deepEqual(
    s.conditions.map((c: { type: string; status: string; reason: string }) => `${c.type}=${c.status}/${c.reason}`),
    ['Applied=False/Waiting', 'Ready=False/Waiting'],
  );
  assert.equal(agent.state().ok, true, 'waiting for a certificate does not make the agent unhealthy');
  assert.equal(existsSync(join(env.root, 'tls/cert.pem')), false, 'no empty certificate file is written');
  assert.equal(readFileSync(join(env.root, 'other'), 'utf8'), 'o');
});

test('agent: dependsOn: a failed dependency skips its dependent (DependencyFailed), an independent sibling applies', async (t) => {
  const env = await setup(t);
  const agent = agentFor(env, { nodeName: 'a', root: env.root, connection: env.server.config });
  await agent.start();
  await putDeclaration(env.admin, 'a', 1, [
    { id: 'app/dir', owner: 'app', kind: 'Directory', spec: { path: '/app' } },
    { id: 'app/conf', owner: 'app', kind: 'File', spec: { path: '/etc/app/conf', content: 'c\n' } },
    {
      id: 'app/server',
      owner: 'app',
      kind: 'Service',
      dependsOn: ['app/dir', 'app/conf'],
      spec: { command: foreverCommand('agent-test-depends'), workingDirectory: '/app' },
    },
    {
      id: 'app/notes',
      owner: 'app',
      kind: 'File',
      dependsOn: ['app/dir'],
      spec: { path: '/app/notes', content: 'n\n' },
    },
  ]);
  const s = await waitFor(async () => {
    const st = await status(env, 'declarations', 'a');
    return st.results?.[1]?.state === 'Failed' && st;
  });
  assert.deepEqual(
    s.results.map((r: { id: string; state: string }) => `${r.id} ${r.state}`),
    ['app/dir Applied', 'app/conf Failed', 'app/server DependencyFailed', 'app/notes Applied'],
  );
  assert.match(s.results[1].message, /parent directory \/etc\/app/);
  assert.equal(s.results[2].message, 'not attempted: it depends on app/conf, which is Failed');
  assert.equal(servicePid(env.stateDir, 'app/server'), undefined, 'the dependent service was not started');
  assert.equal(
    readFileSync(join(env.root, 'app/notes'), 'utf8'),
    'n\n',
    'the independent sibling of the same owner applied',
  );
  assert.deepEqual(
    s.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`),
    ['Applied=False', 'Ready=False'],
  );

  mkdirSync(join(env.root, 'etc/app'), { recursive: true });
  await appliedGeneration(env, 1);
  assert.ok(servicePid(env.stateDir, 'app/server'), 'once its dependency applied, the service runs');
});

test('agent: later starts need only the state dir, adopt running services; --stop-services-on-exit stops them', async (t) => {
  const env = await setup(t);
  const first = agentFor(env, { nodeName: 'a', root: env.root, connection: env.server.config });
  await first.start();
  await putDeclaration(env.admin, 'a', 1, v1);
  await appliedGeneration(env, 1);
  const pid = servicePid(env.stateDir, 'web/server');
  await first.stop();
  assert.equal(servicePid(env.stateDir, 'web/server'), pid, 'stop() leaves services running');

  await assert.rejects(agentFor(env, { nodeName: 'b' }).start(), /belongs to node "a", not "b"/);
  await assert.rejects(
    agentFor(env, { root: join(env.dir, 'elsewhere') }).start(),
    /manages root .*root, not .*elsewhere/,
  );
  const second = agentFor(env, { stopServicesOnExit: true });
  const info = await second.start();
  assert.equal(info.node, 'a');
  assert.equal(info.root, env.root);
  await waitFor(() => second.state().lastReconcile?.outcome === 'success', 5000, 'a reconcile');
  assert.equal(servicePid(env.stateDir, 'web/server'), pid, 'the running service was adopted, not started again');
  assert.deepEqual(second.state().generation, { received: 1, applied: 1 });
  await second.stop();
  assert.equal(servicePid(env.stateDir, 'web/server'), undefined, 'the service was stopped on exit');
});

test('agent: the first start needs a node name and a control plane', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-agent-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const logger = memoryLogger();
  await assert.rejects(
    createAgent({ stateDir: dir, logger, metricsListen: false }).start(),
    /first start needs the node name \(--name\)/,
  );
  await assert.rejects(
    createAgent({ stateDir: dir, nodeName: 'a', logger, metricsListen: false }).start(),
    /first start needs --config MESHCONFIG/,
  );
  await assert.rejects(
    createAgent({ stateDir: dir, nodeName: 'A_b', logger, metricsListen: false }).start(),
    /invalid node name "A_b"/,
  );
});
