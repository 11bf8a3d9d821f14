import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHostPort } from '../api/meta/host-port.ts';
import { createAgentMetrics, serveMetrics } from './metrics.ts';
import { idleAgentMetrics, metricValue } from './testing.ts';

test('metrics: text exposition 0.0.4 with every agent metric, HELP/TYPE once per family', () => {
  let unreachable = 0;
  const m = createAgentMetrics({
    node: 'a"b',
    version: '1.0',
    unreachableSeconds: () => unreachable,
    generations: () => ({ received: 4, applied: 3 }),
    outboxItems: () => 2,
  });
  m.reconciled('success', 0.004);
  m.reconciled('success', 0.2);
  m.reconciled('failure', 3);
  m.setOwned(7);
  unreachable = 12.5;
  const text = m.render();
  assert.ok(text.endsWith('\n'));
  for (const line of text.trimEnd().split('\n')) {
    assert.match(line, /^(# (HELP|TYPE) meshagent_\w+ .+|meshagent_\w+(\{[^}]*\})? [-+\d.eInfNa]+)$/, line);
  }
  assert.equal(metricValue(text, 'meshagent_reconciles_total{result="success"}'), 2);
  assert.equal(metricValue(text, 'meshagent_reconciles_total{result="failure"}'), 1);
  assert.equal(metricValue(text, 'meshagent_reconciles_total{result="error"}'), 0);
  assert.equal(metricValue(text, 'meshagent_reconcile_duration_seconds_bucket{le="0.005"}'), 1);
  assert.equal(metricValue(text, 'meshagent_reconcile_duration_seconds_bucket{le="0.25"}'), 2);
  assert.equal(metricValue(text, 'meshagent_reconcile_duration_seconds_bucket{le="+Inf"}'), 3);
  assert.equal(metricValue(text, 'meshagent_reconcile_duration_seconds_count'), 3);
  assert.ok(Math.abs(metricValue(text, 'meshagent_reconcile_duration_seconds_sum')! - 3.204) < 1e-9);
  assert.equal(metricValue(text, 'meshagent_owned_resources'), 7);
  assert.equal(metricValue(text, 'meshagent_control_plane_unreachable_seconds'), 12.5);
  assert.equal(metricValue(text, 'meshagent_declaration_generation{state="received"}'), 4);
  assert.equal(metricValue(text, 'meshagent_declaration_generation{state="applied"}'), 3);
  assert.equal(metricValue(text, 'meshagent_outbox_items'), 2);
  assert.match(text, /meshagent_info\{node="a\\"b",version="1.0"\} 1/);
  assert.equal(text.match(/# TYPE meshagent_reconcile_duration_seconds histogram/g)?.length, 1);
});

test('metrics: the endpoint serves /metrics, /healthz (503 when not ok) and 404 otherwise', async () => {
  let ok = true;
  const metrics = idleAgentMetrics('a');
  const srv = await serveMetrics({ listen: '127.0.0.1:0', metrics, health: () => ({ ok, node: 'a' }) });
  try {
    assert.match(srv.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const m = await fetch(`${srv.url}/metrics`);
    assert.equal(m.status, 200);
    assert.equal(m.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(await m.text(), /meshagent_owned_resources 0/);
    const h = await fetch(`${srv.url}/healthz`);
    assert.deepEqual([h.status, await h.json()], [200, { ok: true, node: 'a' }]);
    ok = false;
    assert.equal((await fetch(`${srv.url}/healthz`)).status, 503);
    assert.equal((await fetch(`${srv.url}/nope`)).status, 404);
  } finally {
    await srv.close();
  }
});

test('metrics: --metrics-listen addresses', () => {
  assert.deepEqual(parseHostPort('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(parseHostPort('[::1]:9100'), { host: '::1', port: 9100 });
  assert.throws(() => parseHostPort('9100'), /HOST:PORT/);
  assert.throws(() => parseHostPort('h:70000'), /HOST:PORT/);
});
