// The real `mesh-agent` process and a missing or failing root: it refuses to start naming the flag or the store
// the root came from, /healthz says degraded (503, and why) while a resource fails, `mesh-agent reconcile`
// retries at once, and a root created again is applied as soon as the agent is started again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Declaration } from '../api/v1alpha1/generated/declaration.ts';
import { agentBootstrapPath, renderAgentBootstrap } from '../api/wire/agent-bootstrap.ts';
import { runAgentUntilExit, spawnAgent, waitFor, type AgentProcess } from './testing.ts';

/** What `meshctl init` hands the control-plane node's agent: its identity and first Declaration (no control plane runs). */
function writeBootstrap(stateDir: string): void {
  const declaration: Declaration = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'a', uid: 'decl-a', generation: 1 },
    spec: {
      generation: 1,
      resources: [
        { id: 'web/dir', owner: 'web', kind: 'Directory', spec: { path: '/srv' } },
        { id: 'web/conf', owner: 'web', kind: 'File', spec: { path: '/srv/conf', content: 'v=1\n' } },
        { id: 'web/late', owner: 'web', kind: 'File', spec: { path: '/late/conf', content: 'late\n' } },
      ],
    },
  };
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(
    agentBootstrapPath(stateDir),
    renderAgentBootstrap({ nodeName: 'a', connection: { server: 'https://127.0.0.1:9' }, declaration }),
  );
}

const healthz = async (a: AgentProcess): Promise<{ status: number; body: Record<string, unknown> }> => {
  const res = await fetch(`${a.metrics}/healthz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

test('mesh-agent: a missing --root fails at once naming the flag, before the state directory is touched', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-agent-root-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const stateDir = join(dir, 'state');
  const missing = await runAgentUntilExit(['run', '--state-dir', stateDir, '--name', 'a', '--root', join(dir, 'nope')]);
  assert.equal(missing.code, 2, missing.output);
  assert.match(missing.output, new RegExp(`--root ${join(dir, 'nope')} does not exist: every declared path resolves`));
  assert.equal(existsSync(stateDir), false, 'nothing was created');
  writeFileSync(join(dir, 'file'), '');
  const file = await runAgentUntilExit(['run', '--state-dir', stateDir, '--root', join(dir, 'file')]);
  assert.equal(file.code, 2, file.output);
  assert.match(file.output, /--root \S+file is not a directory/);
});

test('mesh-agent: /healthz is 503 while a resource fails, `mesh-agent reconcile` retries now; a stored root that vanished stops the start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-agent-recovery-'));
  const [stateDir, root] = [join(dir, 'state'), join(dir, 'root')];
  const agents: AgentProcess[] = [];
  t.after(async () => {
    for (const a of agents) await a.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  mkdirSync(root);
  writeBootstrap(stateDir);
  const run = ['--state-dir', stateDir, '--reconcile-interval', '200ms'];
  agents.push(await spawnAgent([...run, '--root', root]));
  const degraded = await waitFor(async () => {
    const h = await healthz(agents[0]);
    return h.status === 503 && h;
  });
  assert.equal(degraded.body.ok, false);
  assert.equal(degraded.body.reason, 'the last reconcile did not apply 1 of 3 resources: web/late Failed');
  assert.equal(readFileSync(join(root, 'srv/conf'), 'utf8'), 'v=1\n', 'the resources that do not fail are applied');

  // Fixed after a second failure: the resource now waits 2 s before its next attempt, unless told to retry now.
  const attempts = () => agents[0].lines().filter((l) => l.msg === 'Failed to create File' && l.id === 'web/late');
  await waitFor(() => attempts().length >= 2, 10_000, 'a second failure');
  mkdirSync(join(root, 'late'));
  const told = await runAgentUntilExit(['reconcile', '--state-dir', stateDir]);
  assert.equal(told.code, 0, told.output);
  assert.match(told.output, new RegExp(`Sent SIGHUP to the agent of node "a" \\(pid ${agents[0].pid}\\)`));
  assert.match(told.output, /Reconciled: all 3 resources applied/);
  assert.deepEqual(await healthz(agents[0]).then((h) => [h.status, h.body.ok, h.body.reason]), [200, true, undefined]);
  assert.equal(readFileSync(join(root, 'late/conf'), 'utf8'), 'late\n');

  assert.equal(await agents[0].kill('SIGTERM'), 0);
  const none = await runAgentUntilExit(['reconcile', '--state-dir', stateDir]);
  assert.equal(none.code, 1, none.output);
  assert.match(
    none.output,
    /the agent of \S+ is not running \(pid \d+, recorded in its agent.json, is not that process\)/,
  );

  // The root is gone (an unmounted disk): the next start names the root it kept from its first start, and stops.
  rmSync(root, { recursive: true });
  const gone = await runAgentUntilExit(['run', ...run]);
  assert.equal(gone.code, 1, gone.output);
  assert.match(gone.output, /Failed to start agent/);
  assert.ok(
    gone.output.includes(`the root ${root} (given with --root at the first start of the agent of ${stateDir}`),
    gone.output,
  );
  mkdirSync(join(root, 'late'), { recursive: true });
  agents.push(await spawnAgent(run));
  await waitFor(async () => (await healthz(agents[1])).status === 200, 10_000, 'healthz ok after the root came back');
  assert.equal(readFileSync(join(root, 'srv/conf'), 'utf8'), 'v=1\n');
});
