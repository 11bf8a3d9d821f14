// An event the agent queued while the control plane was unreachable and delivered later keeps the time it
// happened: the outbox records it, the reporter writes it as the Event's first/lastTimestamp, and the built
// meshctl's `get events` and `describe` count AGE from it, not from when the Event reached the server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import { silentLogger } from '../../api/meta/logger.ts';
import { openAgentStore } from '../../agent/store/agent-store.ts';
import { createReachability } from '../../agent/sync/reachability.ts';
import { createReporter } from '../../agent/sync/reporter.ts';
import { startServer } from '../harness.ts';
import { buildCli } from './cli-harness.ts';

test('an event delivered after an outage shows the age of when it happened', async (t) => {
  const [server, cli] = await Promise.all([startServer(), buildCli()]);
  const stateDir = mkdtempSync(join(tmpdir(), 'meshctl-event-age-'));
  const client = createClient(server.config);
  const store = await openAgentStore({ stateDir, logger: silentLogger });
  t.after(async () => {
    client.close();
    await store.close();
    await server.stop();
    cli.cleanup();
    rmSync(stateDir, { recursive: true, force: true });
  });
  await client.create('nodes', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: 'n1' },
    spec: {},
  });

  // Queued 10 minutes ago, while the control plane could not be reached; delivered now.
  const happened = new Date(Date.now() - 600_000).toISOString();
  await store.enqueue({
    type: 'Normal',
    reason: 'DriftCorrected',
    message: 'put back /srv/greeter/greeting.txt',
    involvedObject: { kind: 'Node', name: 'n1' },
    time: happened,
  });
  const reach = createReachability({ store, logger: silentLogger, node: 'n1', server: server.url });
  const reporter = createReporter({
    client,
    node: 'n1',
    store,
    reach,
    logger: silentLogger,
    agentVersion: 'test',
    state: { declaration: () => undefined, run: () => undefined, appliedGeneration: () => undefined },
  });
  await reporter.flushOutbox();
  assert.deepEqual(store.outbox(), [], 'delivered');
  const [event] = (await client.list('events')).items;
  assert.equal(event?.lastTimestamp, happened);
  assert.equal(event?.firstTimestamp, happened);
  assert.ok(
    Date.parse(event.metadata.creationTimestamp!) > Date.parse(happened) + 500_000,
    'it reached the server now',
  );

  const meshctl = (...args: string[]) => cli.run(args, { config: server.meshconfigPath });
  const get = await meshctl('get', 'events');
  assert.equal(get.code, 0, get.stderr);
  assert.match(get.stdout, /\n\S+ +Normal +DriftCorrected +n1 +put back \S+ +10m\n$/);
  const describe = await meshctl('describe', 'node', 'n1');
  assert.equal(describe.code, 0, describe.stderr);
  assert.match(describe.stdout, /\n {2}Normal +DriftCorrected +10m +mesh-agent, n1 +put back /);
});
