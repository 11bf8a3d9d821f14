import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Certificate, Mesh, Node } from '../api/v1alpha1/generated/index.ts';
import { statusReport, type StatusInput } from './status-report.ts';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();
const mesh = (deadline: number, backup?: number): Mesh => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Mesh',
  metadata: { name: 'mesh' },
  status: {
    hubNode: 'hub',
    recoveryDeadline: iso(deadline),
    ...(backup !== undefined ? { lastVerifiedBackup: { name: 'b-1', time: iso(backup) } } : {}),
  },
});
const node = (name: string, reachable: boolean): Node => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name },
  status: { reachable, since: iso(NOW - 60_000), lastSeen: iso(NOW - 5000) },
});
const cert = (name: string, notAfter: number): Certificate => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Certificate',
  metadata: { name },
  spec: { dnsNames: [`${name}.example.com`], node: 'a' },
  status: { notAfter: iso(notAfter), conditions: [] },
});
const input = (over: Partial<StatusInput>): StatusInput => ({
  server: 'https://127.0.0.1:6443',
  now: NOW,
  nodes: [node('a', true), node('hub', true)],
  certificates: [cert('web', NOW + 40 * DAY), cert('api', NOW - DAY)],
  minBudgetMs: 7 * DAY,
  maxBackupAgeMs: DAY,
  ...over,
});

test('passes with a long budget and a fresh backup; lists the expired certificate first', () => {
  const out = statusReport(input({ mesh: mesh(NOW + 30 * DAY, NOW - 3_600_000) }));
  assert.deepEqual(out.problems, []);
  assert.match(out.text, /Outage budget: +30d/);
  assert.match(out.text, /Last verified backup: b-1, taken .*\(60m ago\)/);
  const certLines = out.text.split('\n').filter((l) => /^(api|web) /.test(l));
  assert.match(certLines[0], /^api .*EXPIRED/);
  assert.match(out.text, /new assignments, new modules, new versions +working/);
});

test('--check problems: budget under the minimum, no backup, a stale backup', () => {
  assert.deepEqual(statusReport(input({ mesh: mesh(NOW + 2 * DAY, NOW - 1000) })).problems, [
    'the outage budget 2d is under the minimum 7d',
  ]);
  assert.deepEqual(statusReport(input({ mesh: mesh(NOW + 30 * DAY) })).problems, ['there is no verified backup']);
  assert.deepEqual(statusReport(input({ mesh: mesh(NOW + 30 * DAY, NOW - 2 * DAY) })).problems, [
    'the last verified backup is older than 24h',
  ]);
});

test('unreachable: says so, uses the local agent clock, and the table shows what is stopped', () => {
  const out = statusReport(
    input({
      error: 'connect ECONNREFUSED 127.0.0.1:6443',
      nodes: [],
      certificates: [],
      local: {
        node: 'a',
        updatedAt: iso(NOW),
        reachable: false,
        unreachableSince: iso(NOW - 42_000),
        lastContact: iso(NOW - 45_000),
        certificates: [{ name: 'web', notAfter: iso(NOW + DAY) }],
      },
    }),
  );
  assert.deepEqual(out.problems, ['the control plane at https://127.0.0.1:6443 is unreachable']);
  assert.match(out.text, /UNREACHABLE at https:\/\/127\.0\.0\.1:6443/);
  assert.match(out.text, /node a has not reached it for 42s/);
  assert.match(out.text, /new grants \(routes\) and certificate provisioning +STOPPED/);
  assert.match(out.text, /everything already assigned, on every node +working/);
});

test('an unreachable hub stops non-co-located overlay paths only', () => {
  const out = statusReport(input({ mesh: mesh(NOW + 30 * DAY, NOW), nodes: [node('a', true), node('hub', false)] }));
  assert.match(
    out.text,
    /non-co-located overlay paths +STOPPED \(hub hub unreachable since 2026-12-01T11:59:00.000Z\)/,
  );
  assert.match(out.text, /a new node joining +working/);
});
