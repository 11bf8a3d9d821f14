/**
 * The automation example (hack/examples/label-unreachable.ts) as a user runs it — its own process with a
 * meshconfig — against the real `mesh-control-plane` and a real `mesh-agent` heartbeating every 300 ms, with a
 * 2 s grace period on the Mesh. Killing the agent makes the node unreachable and the example labels it; the
 * control plane restarts meanwhile (the example's informer resumes and keeps the label); the agent returns and
 * the label is removed. A node that never had an agent (no Reachable condition) is never labelled.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import { freePort, spawnAgent, waitFor, type AgentProcess } from '../../agent/testing.ts';
import { LABEL } from '../../hack/examples/label-unreachable.ts';
import { REPO_ROOT, captureOutput, spawnControlPlane, type ControlPlaneProcess } from '../harness.ts';

const NODE = 'edge';

test('the example labels a node while it is unreachable and removes the label when it returns', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-automation-'));
  const root = join(dir, 'root');
  mkdirSync(root);
  const listen = `127.0.0.1:${await freePort()}`;
  const cps: ControlPlaneProcess[] = [await spawnControlPlane({ dataDir: join(dir, 'cp'), listen })];
  const clients: HttpClient[] = [createClient(cps[0].config)];
  const agents: AgentProcess[] = [];
  t.after(async () => {
    for (const c of clients) c.close();
    for (const a of agents) await a.kill('SIGKILL');
    for (const cp of cps) await cp.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  const admin = (): HttpClient => clients[clients.length - 1];
  const startAgent = async (first: boolean): Promise<void> => {
    const args = ['--state-dir', join(dir, 'state'), '--heartbeat-interval', '300ms', '--reconcile-interval', '300ms'];
    if (first) args.push('--name', NODE, '--root', root, '--config', cps[0].meshconfigPath);
    agents.push(await spawnAgent(args));
  };
  await admin().patch('meshes', 'mesh', { spec: { reachabilityGracePeriod: '2s' } });
  await admin().create('nodes', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'never-joined' },
    spec: { site: 'home' },
  });
  await startAgent(true);

  const example = spawn(
    process.execPath,
    ['--import', 'tsx', join('hack', 'examples', 'label-unreachable.ts'), cps[0].meshconfigPath],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const out = captureOutput(example);
  const exited = new Promise<number | null>((resolve) => example.once('exit', (code) => resolve(code)));
  t.after(() => void example.kill('SIGKILL'));
  const fail = (e: Error): never => {
    throw new Error(`${e.message}\nexample output:\n${out.stderr()}${out.stdout()}`);
  };
  const label = async (name: string): Promise<string | undefined> =>
    (await admin().get('nodes', name)).metadata.labels?.[LABEL];
  const reachable = async (): Promise<string | undefined> =>
    (await admin().get('nodes', NODE)).status?.conditions?.find((c) => c.type === 'Reachable')?.status;

  await waitFor(async () => (await reachable()) === 'True', 20_000, 'the node reachable').catch(fail);
  await waitFor(() => /"msg":"Started labeler"/.test(out.stderr()), 20_000, 'the example started').catch(fail);
  assert.equal(await label(NODE), undefined);

  // The agent dies: the node becomes unreachable and the example labels it.
  await agents[0].kill('SIGKILL');
  await waitFor(async () => (await label(NODE)) === 'true', 30_000, 'the label').catch(fail);
  assert.equal(await reachable(), 'False');
  await waitFor(
    () => /"msg":"Labelled node unreachable".*"node":"edge"/.test(out.stderr()),
    10_000,
    'its log line',
  ).catch(fail);

  // The control plane restarts on the same data dir and port: the example's informer resumes, the label stays.
  await cps[0].stop();
  cps.length = 0;
  cps.push(await spawnControlPlane({ dataDir: join(dir, 'cp'), listen }));
  clients.push(createClient(cps[0].config));
  assert.equal(await label(NODE), 'true');

  // The agent returns: the node is reachable again and the example removes the label.
  await startAgent(false);
  await waitFor(async () => (await label(NODE)) === undefined, 30_000, 'the label removed').catch(fail);
  assert.equal(await reachable(), 'True');
  await waitFor(
    () => /"msg":"Removed unreachable label".*"node":"edge"/.test(out.stderr()),
    10_000,
    'its log line',
  ).catch(fail);
  assert.equal(await label('never-joined'), undefined, 'a node without a Reachable condition is not labelled');

  example.kill('SIGTERM');
  assert.equal(await exited, 0, out.stderr());
  assert.match(out.stderr(), /"msg":"Stopped labeler"/);
});
