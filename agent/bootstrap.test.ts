// The agent's first start from the bootstrap file `meshctl init` writes, with no control plane running
// (there is none yet: this agent is what will start it). In-process agent, real store, real files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentBootstrapPath, renderAgentBootstrap, type AgentBootstrap } from '../api/wire/agent-bootstrap.ts';
import { createAgent, type AgentOptions } from './agent.ts';
import { memoryLogger } from './engine/testing.ts';
import { openAgentStore } from './store/agent-store.ts';

function world(t: { after(fn: () => void): void }): { stateDir: string; root: string } {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-bootstrap-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const w = { stateDir: join(dir, 'state'), root: join(dir, 'root') };
  mkdirSync(w.stateDir);
  mkdirSync(w.root);
  return w;
}

const boot = (content: string): AgentBootstrap => ({
  nodeName: 'cp-1',
  site: 'lab',
  connection: { server: 'https://127.0.0.1:1', token: 'node-credential' },
  declaration: {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'cp-1', uid: 'u-1', generation: 1 },
    spec: {
      generation: 1,
      resources: [{ id: 'hub/role', owner: 'hub', kind: 'File', spec: { path: '/role.txt', content } }],
    },
  },
});

const options = (w: { stateDir: string; root: string }, extra: Partial<AgentOptions> = {}): AgentOptions => ({
  stateDir: w.stateDir,
  root: w.root,
  metricsListen: false,
  logger: memoryLogger(),
  reconnect: { initialMs: 60_000 },
  ...extra,
});

test('a first start imports the bootstrap: identity and Declaration, applied with no control plane', async (t) => {
  const w = world(t);
  writeFileSync(agentBootstrapPath(w.stateDir), renderAgentBootstrap(boot('hub\n')), { mode: 0o600 });
  const agent = createAgent(options(w));
  const info = await agent.start();
  await agent.stop();
  assert.equal(info.node, 'cp-1');
  assert.equal(readFileSync(join(w.root, 'role.txt'), 'utf8'), 'hub\n');
  assert.ok(!existsSync(agentBootstrapPath(w.stateDir)) && existsSync(`${agentBootstrapPath(w.stateDir)}.imported`));
  const store = await openAgentStore({ stateDir: w.stateDir, logger: memoryLogger() });
  try {
    assert.deepEqual(store.identity(), {
      nodeName: 'cp-1',
      root: w.root,
      server: 'https://127.0.0.1:1',
      token: 'node-credential',
      site: 'lab',
    });
    assert.equal(store.declaration()?.object.metadata.uid, 'u-1');
  } finally {
    await store.close();
  }
});

test('a bootstrap never replaces a Declaration the store already holds', async (t) => {
  const w = world(t);
  writeFileSync(agentBootstrapPath(w.stateDir), renderAgentBootstrap(boot('first\n')));
  const first = createAgent(options(w));
  await first.start();
  await first.stop();
  writeFileSync(agentBootstrapPath(w.stateDir), renderAgentBootstrap(boot('second\n')));
  const log = memoryLogger();
  const second = createAgent(options(w, { logger: log }));
  await second.start();
  await second.stop();
  assert.equal(readFileSync(join(w.root, 'role.txt'), 'utf8'), 'first\n');
  assert.ok(log.lines.some((l) => l.msg === 'Ignored bootstrap Declaration: the store already holds one'));
});

test('a bootstrap for another node, or a damaged one, stops the start with a clear error', async (t) => {
  const w = world(t);
  writeFileSync(agentBootstrapPath(w.stateDir), renderAgentBootstrap(boot('x\n')));
  await assert.rejects(
    createAgent(options(w, { nodeName: 'other' })).start(),
    /bootstrap declaration \(written by meshctl init\) is for node "cp-1", not "other"/,
  );
  writeFileSync(agentBootstrapPath(w.stateDir), '{"kind":"AgentBootstrap"');
  await assert.rejects(createAgent(options(w)).start(), /bootstrap-declaration\.json: not valid JSON/);
  assert.ok(!existsSync(join(w.root, 'role.txt')));
});
