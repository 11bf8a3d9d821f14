import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clockReport, type ClockFacts } from './node-clock.ts';

const T0 = Date.parse('2026-12-01T12:00:00Z');
const facts: ClockFacts = {
  node: 'a',
  updatedAt: '2026-12-01T12:00:00.000Z',
  reachable: false,
  lastContact: '2026-12-01T11:59:50.000Z',
  unreachableSince: '2026-12-01T11:59:55.000Z',
  certificates: [
    { name: 'late', notAfter: '2026-12-01T13:00:00.000Z' },
    { name: 'soon', notAfter: '2026-12-01T12:01:00.000Z' },
  ],
};

test('the unreachable time grows and the remaining time shrinks with now; a passed notAfter is expired', () => {
  const at0 = clockReport(facts, T0);
  assert.equal(at0.unreachableSeconds, 5);
  assert.deepEqual(
    at0.certificates.map((c) => [c.name, c.remainingSeconds, c.expired]),
    [
      ['soon', 60, false],
      ['late', 3600, false],
    ],
  );
  assert.deepEqual([at0.deadline, at0.budgetSeconds, at0.setBy], ['2026-12-01T12:01:00.000Z', 60, 'certificate soon']);
  const later = clockReport(facts, T0 + 90_000);
  assert.equal(later.unreachableSeconds, 95);
  assert.deepEqual(
    later.certificates.map((c) => [c.name, c.remainingSeconds, c.expired]),
    [
      ['soon', -30, true],
      ['late', 3510, false],
    ],
  );
  assert.equal(later.budgetSeconds, -30);
});

test('reachable: 0 s unreachable; no certificate: no deadline', () => {
  const r = clockReport({ node: 'b', updatedAt: facts.updatedAt, reachable: true, certificates: [] }, T0);
  assert.equal(r.unreachableSeconds, 0);
  assert.equal(r.deadline, undefined);
  assert.equal(r.budgetSeconds, undefined);
});
