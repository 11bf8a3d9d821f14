import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kindByPlural } from '../../v1alpha1/kinds.ts';
import { humanDuration } from '../../meta/human-duration.ts';
import { toTable } from './table.ts';

test('humanDuration prints ages like kubectl', () => {
  const s = 1000;
  const cases: [number, string][] = [
    [-5 * s, '<invalid>'],
    [-500, '0s'],
    [0, '0s'],
    [59 * s, '59s'],
    [119 * s, '119s'],
    [120 * s, '2m'],
    [125 * s, '2m5s'],
    [10 * 60 * s, '10m'],
    [179 * 60 * s, '179m'],
    [3 * 3600 * s, '3h'],
    [3 * 3600 * s + 60 * s, '3h1m'],
    [8 * 3600 * s, '8h'],
    [47 * 3600 * s, '47h'],
    [48 * 3600 * s, '2d'],
    [50 * 3600 * s, '2d2h'],
    [8 * 86400 * s, '8d'],
    [729 * 86400 * s, '729d'],
    [730 * 86400 * s, '2y'],
    [731 * 86400 * s, '2y1d'],
    [9 * 365 * 86400 * s, '9y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, String(ms));
});

test('a Table row has NAME, the kind columns (missing values null, lists joined) and AGE', () => {
  const info = kindByPlural('certificates')!;
  const obj = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Certificate',
    metadata: { name: 'c', resourceVersion: '7', creationTimestamp: new Date(Date.now() - 90_000).toISOString() },
    spec: { dnsNames: ['a.example', 'b.example'], node: 'n1' },
    status: {
      conditions: [
        { type: 'Ready', status: 'True', reason: 'Issued', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
    },
  };
  const t = toTable(info, [obj], { as: 'table', apiVersion: 'meta.k8s.io/v1', includeObject: 'Metadata' }, '9');
  const cols = t.columnDefinitions.map((c) => c.name);
  assert.deepEqual(cols, ['Name', ...info.columns.map((c) => c.name), 'Age']);
  const row = (t.rows as { cells: unknown[]; object: { kind: string } }[])[0];
  assert.deepEqual(row.cells.slice(0, 4), ['c', 'a.example,b.example', null, 'True']);
  assert.equal(row.cells[row.cells.length - 1], '90s');
  assert.equal(row.object.kind, 'PartialObjectMetadata');
  assert.deepEqual(t.metadata, { resourceVersion: '9' });
});

test("an Event's Age cell (what kubectl prints) is since it last happened", () => {
  const info = kindByPlural('events')!;
  const obj = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Event',
    metadata: { name: 'e', resourceVersion: '3', creationTimestamp: new Date().toISOString() },
    involvedObject: { kind: 'Node', name: 'a' },
    type: 'Normal',
    reason: 'DriftCorrected',
    lastTimestamp: new Date(Date.now() - 600_000).toISOString(),
  };
  const t = toTable(info, [obj], { as: 'table', apiVersion: 'meta.k8s.io/v1', includeObject: 'None' }, '3');
  const row = (t.rows as { cells: unknown[] }[])[0];
  assert.equal(row.cells[row.cells.length - 1], '10m');
});
