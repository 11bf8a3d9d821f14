/**
 * What one change to a Module assigned to every node costs the control plane (issue 14), counted with the real
 * parts: a `mesh-control-plane` process (HTTPS, the real store, every controller) over the scale benchmark's
 * bulk fixture (N Nodes with credentials and an Assignment each), and N agents running the agent's own link code
 * (bench/lib/sim-agent.ts: agent/sync over an in-memory agent store). The requests come from `/metrics`, the store
 * writes from the journal's new lines. Heartbeats and log shipping are slowed out of the window, so every request
 * and write counted is the change's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import { findCondition } from '../../api/meta/conditions.ts';
import { controlPlanePaths } from '../../api/server/pki/first-start.ts';
import type { Module } from '../../api/v1alpha1/generated/module.ts';
import { createScaleFixture } from '../../bench/lib/scale-fixture.ts';
import { startSimAgent, type SimAgent } from '../../bench/lib/sim-agent.ts';
import { eventually } from '../eventually.ts';
import { httpRequest, spawnControlPlane } from '../harness.ts';

const N = 12;
const QUIET = 3_600_000; // heartbeat and log intervals: no second heartbeat or log POST during the test

const moduleAt = (round: number, resourceVersion?: string): Module => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Module',
  metadata: { name: 'fan', ...(resourceVersion ? { resourceVersion } : {}) },
  spec: {
    version: `1.0.${round}`,
    resources: [
      { id: 'conf', kind: 'File', spec: { path: '/srv/fan.txt', content: `round=${round}\n`, mode: '0644' } },
    ],
  },
});

/** The journal's lines so far, all segments in order. */
function journalLines(storeDir: string): string[] {
  return readdirSync(storeDir)
    .filter((f) => /^journal-\d+\.jsonl$/.test(f))
    .sort()
    .flatMap((f) => readFileSync(join(storeDir, f), 'utf8').split('\n').filter(Boolean));
}

/** `meshctl_apiserver_requests_total` by its label set. */
async function requestCounts(config: Parameters<typeof httpRequest>[0]): Promise<Map<string, number>> {
  const text = (await httpRequest(config, 'GET', '/metrics')).text;
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^meshctl_apiserver_requests_total(\{[^}]*\}) (\d+)$/gm)) out.set(m[1], Number(m[2]));
  return out;
}

test('a change to a Module assigned to every node costs each node one request and the control plane at most 8 store writes per node', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-fanout-cost-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  await (await spawnControlPlane({ dataDir })).stop();
  const credentials = await createScaleFixture(dataDir, N, 'fan');
  const cp = await spawnControlPlane({ dataDir, timeoutMs: 60_000 });
  t.after(() => cp.stop());
  const admin = createClient(cp.config);
  t.after(() => admin.close());
  const stored = await admin.create('modules', moduleAt(0));
  const agents: SimAgent[] = credentials.map(({ node, token }) =>
    startSimAgent({ node, config: { ...cp.config, token }, heartbeatIntervalMs: QUIET, logEveryMs: QUIET }),
  );
  t.after(() => Promise.all(agents.map((a) => a.stop())));

  /** Every node applied `round`, its Node says so, and its Assignment is Applied at the round's version. */
  const settled = (round: number): Promise<void> =>
    eventually(
      async () => {
        const decls = (await admin.list('declarations')).items;
        const applied = decls.filter(
          (d) =>
            d.spec.resources.some((r) => r.kind === 'File' && r.spec.content === `round=${round}\n`) &&
            d.status?.appliedGeneration === d.spec.generation,
        );
        assert.equal(applied.length, N, `Declarations applied at round ${round}`);
        const nodes = (await admin.list('nodes')).items;
        const done = nodes.filter((n) => findCondition(n.status?.conditions, 'DeclarationApplied')?.status === 'True');
        assert.equal(done.length, N, `Nodes with DeclarationApplied=True at round ${round}`);
        const assignments = (await admin.list('assignments')).items;
        const ok = assignments.filter(
          (a) =>
            a.status?.version === `1.0.${round}` && findCondition(a.status?.conditions, 'Applied')?.status === 'True',
        );
        assert.equal(ok.length, N, `Assignments Applied at round ${round}`);
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
  await settled(0);

  const storeDir = controlPlanePaths(dataDir).store;
  const linesBefore = journalLines(storeDir).length;
  const requestsBefore = await requestCounts(cp.config);
  await admin.update('modules', moduleAt(1, stored.metadata.resourceVersion));
  await settled(1);
  const requestsAfter = await requestCounts(cp.config);
  const written = journalLines(storeDir).slice(linesBefore);

  const byPlural = new Map<string, number>();
  for (const line of written) {
    const plural = (JSON.parse(line) as { plural?: string }).plural ?? '?';
    byPlural.set(plural, (byPlural.get(plural) ?? 0) + 1);
  }
  const summary = JSON.stringify(Object.fromEntries(byPlural));
  // The Declaration: rendered once, its status reported once (acknowledgement and result in one write).
  assert.equal(byPlural.get('declarations'), 2 * N, `Declaration writes: ${summary}`);
  // The Node: the controller's status (pending, then applied; one write when it catches both), no agent write.
  assert.ok((byPlural.get('nodes') ?? 0) <= 2 * N, `Node writes: ${summary}`);
  // The Assignment: its status and an Event, each at most twice (Pending, then Applied; once when the
  // controller catches both, as under load).
  assert.ok((byPlural.get('assignments') ?? 0) <= 2 * N, `Assignment writes: ${summary}`);
  assert.ok((byPlural.get('events') ?? 0) <= 2 * N, `Event writes: ${summary}`);
  assert.ok(written.length <= 8 * N + 1, `${written.length} store writes for ${N} nodes: ${summary}`);

  const byNode = [...requestsAfter]
    .filter(([labels]) => labels.includes('client="node"'))
    .map(([labels, count]) => [labels, count - (requestsBefore.get(labels) ?? 0)] as const)
    .filter(([, delta]) => delta > 0);
  assert.deepEqual(
    byNode,
    [['{client="node",verb="PATCH",resource="declarations/status"}', N]],
    'the agents sent only their Declaration status, one per node',
  );
  // The controllers read frozen objects shared with the store (api/server/in-process-values.ts): none may fail.
  const failed = cp
    .output()
    .split('\n')
    .filter((l) => l.includes('Reconcile failed'));
  assert.deepEqual(failed, [], 'no reconcile failed');
});
