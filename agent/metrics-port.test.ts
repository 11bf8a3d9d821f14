// The agent's metrics port stays the same across restarts of one state dir (issue 8: the local mesh's README
// points at the URL in agent.json, which went stale at every restart); a taken port falls back with a log line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../test/harness.ts';
import { readAgentInfo } from './agent-info.ts';
import { createAgent, type AgentOptions } from './agent.ts';
import { memoryLogger } from './engine/testing.ts';

test('agent: a restart serves /metrics on the port it had; a taken port falls back to a free one and says so', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-agent-metrics-port-'));
  const stateDir = join(dir, 'state');
  mkdirSync(join(dir, 'root'));
  const server = await startServer({ insecure: true });
  const blocker = createServer();
  t.after(async () => {
    blocker.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const run = async (extra: Partial<AgentOptions> = {}) => {
    const logger = memoryLogger();
    const agent = createAgent({ stateDir, logger, metricsListen: '127.0.0.1:0', ...extra });
    const info = await agent.start();
    await agent.stop();
    return { metrics: info.metrics!, logger };
  };

  const first = await run({ nodeName: 'a', root: join(dir, 'root'), connection: server.config });
  const port = Number(new URL(first.metrics).port);
  assert.ok(port > 0, first.metrics);
  const second = await run();
  assert.equal(second.metrics, first.metrics, 'the same URL after a restart');
  assert.equal((await readAgentInfo(stateDir)).metrics, first.metrics);

  await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', r));
  const third = await run();
  assert.notEqual(third.metrics, first.metrics);
  const line = third.logger.lines.find((l) => l.msg === 'Served metrics on a new port: the previous one was taken');
  assert.deepEqual(line?.fields, { node: 'a', previousPort: port, port: Number(new URL(third.metrics).port) });
  assert.equal((await readAgentInfo(stateDir)).metrics, third.metrics, 'agent.json names the new URL');
});
