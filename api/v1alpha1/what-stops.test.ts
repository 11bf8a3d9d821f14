import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Mesh, Node } from './generated/index.ts';
import { whatStops } from './what-stops.ts';

const mesh: Mesh = {
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Mesh',
  metadata: { name: 'mesh' },
  status: { hubNode: 'b' },
};
const node = (name: string, reachable: boolean, since?: string): Node => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name },
  status: { reachable, ...(since ? { since } : {}) },
});
const stopped = (rows: ReturnType<typeof whatStops>) => rows.filter((r) => r.stopped).map((r) => r.what);

test('all works while the control plane and the hub are up', () => {
  const rows = whatStops({ controlPlaneDown: false, mesh, nodes: [node('a', true), node('b', true)] });
  assert.equal(rows.length, 7);
  assert.deepEqual(stopped(rows), []);
  assert.ok(rows.every((r) => r.why === '' && r.since === undefined));
});

test('an unreachable hub stops non-co-located paths only, saying which hub and since when', () => {
  const rows = whatStops({ controlPlaneDown: false, mesh, nodes: [node('b', false, '2026-12-01T14:02:00Z')] });
  assert.deepEqual(stopped(rows), ['non-co-located overlay paths']);
  const hub = rows.find((r) => r.stopped)!;
  assert.equal(hub.why, 'hub b unreachable');
  assert.equal(hub.since, '2026-12-01T14:02:00Z');
});

test('the control plane down stops the first five rows since then; assigned work and co-located peers go on', () => {
  const rows = whatStops({ controlPlaneDown: true, downSince: '2026-12-01T15:00:00Z', mesh, nodes: [] });
  assert.deepEqual(stopped(rows).length, 5);
  assert.ok(rows.filter((r) => r.stopped).every((r) => r.since === '2026-12-01T15:00:00Z' && r.why !== ''));
  assert.deepEqual(
    rows.filter((r) => !r.stopped).map((r) => r.what),
    ['co-located direct peers', 'everything already assigned, on every node'],
  );
});
