import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recoveryClock } from '../api/meta/recovery-clock.ts';
import type { Certificate } from '../api/v1alpha1/generated/index.ts';
import { certificatesExpiring, nextMeshStatus, renderMetrics } from './recovery-clock-controller.ts';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const D = 24 * 3_600_000;

const cert = (name: string, node: string, notAfter?: string): Certificate => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Certificate',
  metadata: { name },
  spec: { dnsNames: [`${name}.example.org`], node },
  ...(notAfter ? { status: { notAfter, renewalTime: '2030-01-20T00:00:00Z' } } : {}),
});

test('Mesh status: written when the deadline or what sets it changes, or the budget is a refresh interval off; other fields kept', () => {
  const certs = [cert('web', 'a', '2030-01-31T00:00:00Z'), cert('new', 'b')];
  const c = recoveryClock(certificatesExpiring(certs), T0);
  const first = nextMeshStatus({ controlPlaneNode: 'cp' }, c, 60_000);
  assert.deepEqual(first, {
    controlPlaneNode: 'cp',
    recoveryDeadline: '2030-01-31T00:00:00Z',
    outageBudgetSeconds: (30 * D) / 1000,
    recoveryDeadlineSetBy: { kind: 'Certificate', name: 'web', node: 'a' },
  });
  assert.equal(nextMeshStatus(first, recoveryClock(certificatesExpiring(certs), T0 + 59_000), 60_000), undefined);
  assert.equal(
    nextMeshStatus(first, recoveryClock(certificatesExpiring(certs), T0 + 60_000), 60_000)?.outageBudgetSeconds,
    (30 * D) / 1000 - 60,
  );
  const none = nextMeshStatus(first, recoveryClock([], T0), 60_000);
  assert.deepEqual(none, { controlPlaneNode: 'cp' }, 'no certificates: no deadline');
});

test('metrics: expiry and renewal per certificate with name and node, and the deadline', () => {
  const certs = [cert('web', 'a', '2030-01-31T00:00:00Z'), cert('new', 'b')];
  const text = renderMetrics(certs, recoveryClock(certificatesExpiring(certs), T0));
  const exp = Date.parse('2030-01-31T00:00:00Z') / 1000;
  assert.match(
    text,
    new RegExp(`^meshctl_certificate_expiration_timestamp_seconds\\{name="web",node="a"\\} ${exp}$`, 'm'),
  );
  assert.match(text, /^meshctl_certificate_renewal_timestamp_seconds\{name="web",node="a"\} \d+$/m);
  assert.match(text, new RegExp(`^meshctl_recovery_deadline_timestamp_seconds ${exp}$`, 'm'));
  assert.doesNotMatch(text, /name="new"/, 'a certificate not issued yet has no samples');
  assert.match(text, /^# TYPE meshctl_recovery_deadline_timestamp_seconds gauge$/m);
});
