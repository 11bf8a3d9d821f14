import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Declaration } from '../api/v1alpha1/generated/declaration.ts';
import { memoryLogger } from './engine/testing.ts';
import type { ResourceResult } from './engine/types.ts';
import { createAgentMetrics } from './metrics.ts';
import type { RunOutcome } from './reconcile-loop.ts';
import { createRunEffects, degradedReason } from './run-effects.ts';
import { openAgentStore } from './store/agent-store.ts';

const at = { at: '2026-01-01T00:00:00.000Z', startedAt: '2026-01-01T00:00:00.000Z', durationMs: 1 };

test('healthz reason: none after a reconcile that applied everything, or before any; why otherwise', () => {
  assert.equal(degradedReason(undefined), undefined);
  assert.equal(degradedReason({ ...at, outcome: 'success', resources: 3, notApplied: [] }), undefined);
  assert.equal(
    degradedReason({ ...at, outcome: 'error', error: 'agent store: cannot read state/store.json' }),
    'the last reconcile failed: agent store: cannot read state/store.json',
  );
  const notApplied = Array.from({ length: 12 }, (_, i) => `m/r${i} Failed`);
  assert.equal(
    degradedReason({ ...at, outcome: 'failure', resources: 20, notApplied }),
    `the last reconcile did not apply 12 of 20 resources: ${notApplied.slice(0, 10).join(', ')}, and 2 more`,
  );
});

test('run effects: resources Waiting for a certificate are logged at info once, with a Normal event; not a failure', async (t) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'meshctl-run-effects-'));
  const logger = memoryLogger();
  const store = await openAgentStore({ stateDir, logger });
  t.after(async () => {
    await store.close();
    rmSync(stateDir, { recursive: true, force: true });
  });
  const metrics = createAgentMetrics({
    node: 'a',
    version: 'test',
    unreachableSeconds: () => 0,
    generations: () => ({}),
    outboxItems: () => store.outbox().length,
  });
  const effects = createRunEffects({ node: 'a', store, metrics, logger, afterRun: () => {} });
  const decl: Declaration = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'a', uid: 'u', generation: 1 },
    spec: { generation: 1, resources: [] },
  };
  const result = (id: string, state: ResourceResult['state'], message?: string): ResourceResult => ({
    id,
    kind: 'File',
    owner: 'w',
    action: 'create',
    state,
    ...(message ? { message } : {}),
  });
  const results = [result('w/dir', 'Applied'), result('w/cert', 'Waiting', 'waits for certificate "web"')];
  const timings = { observeMs: 0, planMs: 0, applyMs: 0 };
  const outcome: RunOutcome = {
    decl,
    durationMs: 1,
    result: { results, steps: [], startedAt: '', durationMs: 1, timings, counts: {}, owned: 1 },
  };
  await effects.onRun(outcome);
  await effects.onRun(outcome);
  assert.equal(effects.lastOutcome()?.outcome, 'waiting');
  assert.equal(degradedReason(effects.lastOutcome()), undefined, 'the agent stays healthy');
  assert.equal(effects.appliedGeneration(), undefined, 'the generation is not applied yet');
  assert.deepEqual(
    logger.lines.filter((l) => l.level === 'error'),
    [],
  );
  assert.equal(logger.lines.filter((l) => l.msg === 'Waiting for material from the control plane').length, 1);
  assert.deepEqual(
    store.outbox().map((i) => [i.type, i.reason, i.message]),
    [['Normal', 'Waiting', 'w/cert: waits for certificate "web"']],
  );
});
