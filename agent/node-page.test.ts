// The node page's JSON view (node-page.ts) on a fake clock, and its routes on the real metrics endpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../api/meta/fake-clock.ts';
import type { NodePageStatus } from '../api/meta/node-page.ts';
import type { Declaration, DeclaredResource } from '../api/v1alpha1/generated/declaration.ts';
import { clockReport, type ClockFacts } from '../api/wire/node-clock.ts';
import type { ProcessStatus } from './drivers/process-types.ts';
import { serveMetrics } from './metrics.ts';
import { idleAgentMetrics } from './testing.ts';
import { currentNodeView, nodeStatusView, type NodeViewSources } from './node-page.ts';
import { nodePageRoutes } from './node-page-routes.ts';
import type { RunSummary } from './sync/declaration-status.ts';

const iso = (ms: number): string => new Date(ms).toISOString();
const START = Date.parse('2026-03-01T12:00:00Z');

const RESOURCES: DeclaredResource[] = [
  { id: 'web/dir', owner: 'web', kind: 'Directory', spec: { path: '/srv/web' } },
  { id: 'web/conf', owner: 'web', kind: 'File', spec: { path: '/srv/web/conf', content: 'password=S3CRET-FILE' } },
  {
    id: 'web/server',
    owner: 'web',
    kind: 'Service',
    spec: { command: ['server', '--token=S3CRET-ARG'], env: { API_KEY: 'S3CRET-ENV' } },
  },
  { id: 'web/unit', owner: 'web', kind: 'Service', spec: { driver: 'systemd', command: ['x'] } },
];

function declaration(generation: number, metaGeneration = generation): Declaration {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'node-a', uid: 'u1', generation: metaGeneration },
    spec: { generation, resources: RESOURCES },
  };
}

function facts(clock: FakeClock): ClockFacts {
  return {
    node: 'node-a',
    updatedAt: iso(clock.now()),
    reachable: false,
    lastContact: iso(START - 31_000),
    unreachableSince: iso(START - 30_000),
    certificates: [
      { name: 'late', notAfter: iso(START + 500_000) },
      { name: 'soon', notAfter: iso(START + 100_000) },
    ],
  };
}

const running: ProcessStatus = {
  id: 'web/server',
  phase: 'running',
  pid: 4242,
  fingerprint: 'f',
  adopted: false,
  restarts: 3,
};

function sources(clock: FakeClock, over: Partial<NodeViewSources> = {}): NodeViewSources {
  const f = facts(clock);
  return {
    agentVersion: '9.9.9',
    serving: { facts: () => f },
    clock,
    store: { declaration: () => ({ object: declaration(4), receivedAt: iso(START - 60_000) }) },
    effects: { lastRun: () => undefined, appliedGeneration: () => 3, lastOutcome: () => undefined },
    supervisor: { inspect: async (id) => (id === 'web/server' ? running : undefined) },
    ...over,
  };
}

test('node page view: the unreachable time grows and remaining times shrink with the clock, as mesh-agent status computes them', async () => {
  const clock = new FakeClock({ start: START });
  const src = sources(clock);
  const first = await currentNodeView(src);
  assert.equal(first.node, 'node-a');
  assert.equal(first.agentVersion, '9.9.9');
  assert.equal(first.generatedAt, iso(START));
  assert.deepEqual(first.controlPlane, {
    reachable: false,
    lastContact: iso(START - 31_000),
    unreachableSince: iso(START - 30_000),
    unreachableSeconds: 30,
  });
  assert.deepEqual(
    first.certificates.map((c) => [c.name, c.remainingSeconds, c.expired]),
    [
      ['soon', 100, false],
      ['late', 500, false],
    ],
  );
  assert.deepEqual(first.deadline, { notAfter: iso(START + 100_000), budgetSeconds: 100, setBy: 'certificate soon' });
  clock.advance(45_000);
  const later = await currentNodeView(src);
  assert.equal(later.controlPlane.unreachableSeconds, 75);
  assert.equal(later.certificates[0].remainingSeconds, 55);
  const report = clockReport(src.serving.facts(), clock.now());
  assert.equal(
    later.controlPlane.unreachableSeconds,
    report.unreachableSeconds,
    'the same figure as mesh-agent status',
  );
  assert.deepEqual(later.certificates, report.certificates);
  clock.advance(100_000);
  const expired = await currentNodeView(src);
  assert.deepEqual(
    expired.certificates.map((c) => [c.name, c.expired]),
    [
      ['soon', true],
      ['late', false],
    ],
  );
});

test('node page view: reachable, the clock shows no unreachable time', async () => {
  const clock = new FakeClock({ start: START });
  const f: ClockFacts = {
    node: 'node-a',
    updatedAt: iso(START),
    reachable: true,
    lastContact: iso(START - 1000),
    certificates: [],
  };
  const view = await currentNodeView(sources(clock, { serving: { facts: () => f } }));
  assert.deepEqual(view.controlPlane, { reachable: true, lastContact: iso(START - 1000), unreachableSeconds: 0 });
  assert.equal(view.deadline, undefined);
});

test('node page view: resources in declaration order, Pending until this generation is reconciled, then its results; generations', () => {
  const base = { agentVersion: '1', facts: facts(new FakeClock({ start: START })), nowMs: START, processes: new Map() };
  const stored = { object: declaration(5), receivedAt: iso(START) };
  const pending = nodeStatusView({ ...base, declaration: stored, appliedGeneration: 4 });
  assert.deepEqual(
    pending.resources.map((r) => [r.id, r.kind, r.owner, r.state]),
    RESOURCES.map((r) => [r.id, r.kind, 'web', 'Pending']),
  );
  assert.deepEqual(pending.declaration, { desiredGeneration: 5, appliedGeneration: 4, receivedAt: iso(START) });
  const run: RunSummary = {
    uid: 'u1',
    generation: 5,
    at: iso(START),
    results: [
      { id: 'web/dir', kind: 'Directory', owner: 'web', action: 'noop', state: 'Applied' },
      {
        id: 'web/conf',
        kind: 'File',
        owner: 'web',
        action: 'update',
        state: 'Failed',
        message: 'EACCES: permission denied',
      },
      {
        id: 'web/server',
        kind: 'Service',
        owner: 'web',
        action: 'create',
        state: 'DependencyFailed',
        message: 'web/conf failed',
      },
      { id: 'old/x', kind: 'File', owner: 'old', action: 'remove', state: 'Removed' },
      { id: 'web/unit', kind: 'Service', owner: 'web', action: 'create', state: 'Applied' },
    ],
  };
  const lastOutcome = { at: iso(START), startedAt: iso(START), outcome: 'failure' as const, durationMs: 5 };
  const done = nodeStatusView({ ...base, declaration: stored, run, appliedGeneration: 4, lastOutcome });
  assert.deepEqual(
    done.resources.map((r) => [r.id, r.state, r.message]),
    [
      ['web/dir', 'Applied', undefined],
      ['web/conf', 'Failed', 'EACCES: permission denied'],
      ['web/server', 'DependencyFailed', 'web/conf failed'],
      ['web/unit', 'Applied', undefined],
    ],
  );
  assert.deepEqual(done.lastReconcile, { at: iso(START), outcome: 'failure' });
  const stale = nodeStatusView({ ...base, declaration: { object: declaration(6), receivedAt: iso(START) }, run });
  assert.ok(
    stale.resources.every((r) => r.state === 'Pending'),
    'a run of an older generation does not speak for the new one',
  );
  const none = nodeStatusView(base);
  assert.deepEqual([none.declaration, none.resources, none.services], [undefined, [], []]);
});

test('node page view: services with the supervisor’s pid and restarts; systemd and not-started ones without', async () => {
  const view = await currentNodeView(sources(new FakeClock({ start: START })));
  assert.deepEqual(view.services, [
    { id: 'web/server', driver: 'process', phase: 'running', pid: 4242, restarts: 3 },
    { id: 'web/unit', driver: 'systemd' },
  ]);
  const notYet = await currentNodeView(sources(new FakeClock(), { supervisor: { inspect: async () => undefined } }));
  assert.deepEqual(notYet.services[0], { id: 'web/server', driver: 'process' });
});

test('node page view: never a secret — no file content, env value or command', async () => {
  const text = JSON.stringify(await currentNodeView(sources(new FakeClock({ start: START }))));
  assert.doesNotMatch(text, /S3CRET/);
  assert.doesNotMatch(text, /"spec"|"env"|"command"|"content"/);
});

test('node page routes on the metrics port: the page, its assets, /status.json; 404 names them; a failing view is a 500', async () => {
  const metrics = idleAgentMetrics('a');
  let view: () => Promise<NodePageStatus> = () => currentNodeView(sources(new FakeClock({ start: START })));
  const page = nodePageRoutes({ node: 'node-a', view: () => view() });
  const srv = await serveMetrics({ listen: '127.0.0.1:0', metrics, health: () => ({ ok: true }), page });
  try {
    const html = await fetch(`${srv.url}/`);
    assert.equal(html.status, 200);
    assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(html.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const body = await html.text();
    assert.match(body, /<title>Node node-a — meshctl<\/title>/);
    assert.match(body, /<script defer src="\/ui\/node\.js"><\/script>/);
    const js = await fetch(`${srv.url}/ui/node.js`);
    assert.deepEqual([js.status, js.headers.get('content-type')], [200, 'text/javascript; charset=utf-8']);
    assert.match(await js.text(), /status\.json/);
    const css = await fetch(`${srv.url}/ui/node.css`);
    assert.match(await css.text(), /prefers-color-scheme/);
    const json = await fetch(`${srv.url}/status.json`);
    assert.equal(json.headers.get('cache-control'), 'no-store');
    const got = (await json.json()) as NodePageStatus;
    assert.deepEqual([got.node, got.controlPlane.unreachableSeconds, got.resources.length], ['node-a', 30, 4]);
    const missing = await fetch(`${srv.url}/nope`);
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /\/ \(the node page\), \/status\.json, \/metrics or \/healthz/);
    view = () => Promise.reject(new Error('store closed'));
    const broken = await fetch(`${srv.url}/status.json`);
    assert.deepEqual([broken.status, await broken.text()], [500, 'failed to answer /status.json: store closed\n']);
    assert.equal((await fetch(`${srv.url}/metrics`)).status, 200, 'metrics still answer');
  } finally {
    await srv.close();
  }
});
