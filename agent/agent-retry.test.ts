// The in-process agent against the real API server, on a FakeClock that never moves: a failed resource waits
// out its backoff (1 s after a failure) unless something resets it, so each retry below happens only because
// of what this test says resets it — a new generation, or reconcileNow (what SIGHUP and `mesh-agent reconcile` do).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../api/client/http-client.ts';
import { FakeClock } from '../api/meta/fake-clock.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { DeclaredResource } from '../api/v1alpha1/generated/declaration.ts';
import { startServer } from '../test/harness.ts';
import { createAgent } from './agent.ts';
import { memoryLogger } from './engine/testing.ts';
import { putDeclaration, waitFor } from './testing.ts';

const file = (dir: string, content: string): DeclaredResource => ({
  id: 'x/conf',
  owner: 'x',
  kind: 'File',
  spec: { path: `/${dir}/conf`, content },
});

test('agent: a failed resource is retried at once on a new generation and on reconcileNow, not after its backoff', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-agent-retry-'));
  const root = join(dir, 'root');
  mkdirSync(root);
  const server = await startServer({ insecure: true });
  const admin = createClient(server.config);
  const clock = new FakeClock({ start: Date.now() });
  const agent = createAgent({
    stateDir: join(dir, 'state'),
    nodeName: 'a',
    root,
    connection: server.config,
    metricsListen: false,
    logger: memoryLogger(),
    clock,
  });
  t.after(async () => {
    await agent.stop();
    admin.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const applied = (g: number) =>
    waitFor(
      async () =>
        ((await admin.get('declarations', 'a')) as KubeObject & { status?: { appliedGeneration?: number } }).status
          ?.appliedGeneration === g,
      10_000,
      `generation ${g} applied`,
    );

  // The agent writes the Declaration's status meanwhile: retry a write that lost that race (409).
  const put = (g: number, r: DeclaredResource) =>
    waitFor(() => putDeclaration(admin, 'a', g, [r]).then(() => true), 10_000, `generation ${g} written`);
  await put(1, file('missing', 'v1\n'));
  await agent.start();
  const failed = await waitFor(() => !agent.state().ok && agent.state(), 10_000, 'the first failure');
  assert.equal(failed.reason, 'the last reconcile did not apply 1 of 1 resources: x/conf Failed');

  // The directory appears, the clock has not moved (the resource waits 1 s): only the new generation retries it.
  mkdirSync(join(root, 'missing'));
  await put(2, file('missing', 'v2\n'));
  await applied(2);
  assert.ok(existsSync(join(root, 'missing/conf')), 'the file was written');
  assert.equal(agent.state().ok, true);

  await put(3, file('later', 'v3\n'));
  await waitFor(() => agent.state().reason?.includes('x/conf Failed'), 10_000, 'generation 3 failing');
  mkdirSync(join(root, 'later'));
  await agent.reconcileNow('test');
  assert.deepEqual(
    [agent.state().ok, agent.state().reason, existsSync(join(root, 'later/conf'))],
    [true, undefined, true],
    'reconcileNow retried the waiting resource at once',
  );
  await applied(3);
});
