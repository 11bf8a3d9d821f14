import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Certificate, Mesh } from '../api/v1alpha1/generated/index.ts';
import { failedStatus, issueReason, issuedStatus, renewBeforeMs, retryAt, type Held } from './certificate-status.ts';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const H = 3_600_000;
const D = 24 * H;

const cert = (spec: Partial<Certificate['spec']> = {}): Certificate => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Certificate',
  metadata: { name: 'web', generation: 1 },
  spec: { dnsNames: ['web.example.org'], node: 'a', ...spec },
});
const mesh = (certificates: NonNullable<Mesh['spec']>['certificates']): Mesh => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Mesh',
  metadata: { name: 'mesh' },
  spec: { certificates },
});
const held: Held = { notBefore: T0, notAfter: T0 + 90 * D, issuer: 'internal', dnsNames: ['web.example.org'] };

test('renewBefore: the certificate’s own, else the Mesh’s, else a third of the lifetime (also when not shorter than it)', () => {
  assert.equal(renewBeforeMs(cert(), undefined, 90 * D), 30 * D);
  assert.equal(renewBeforeMs(cert(), mesh({ renewBefore: '240h' }), 90 * D), 10 * D);
  assert.equal(renewBeforeMs(cert({ renewBefore: '48h' }), mesh({ renewBefore: '240h' }), 90 * D), 2 * D);
  assert.equal(
    renewBeforeMs(cert({ renewBefore: '720h' }), undefined, 300_000),
    100_000,
    'a 5-minute certificate is not renewed in a loop',
  );
});

test('issueReason: nothing held, another issuer, other names, renewal due; otherwise nothing to do', () => {
  assert.equal(issueReason(cert(), undefined, undefined, T0), 'NotIssued');
  assert.equal(issueReason(cert(), mesh({ issuer: 'acme' }), held, T0), 'IssuerChanged');
  assert.equal(
    issueReason(cert({ dnsNames: ['web.example.org', 'www.example.org'] }), undefined, held, T0),
    'DNSNamesChanged',
  );
  assert.equal(issueReason(cert(), undefined, held, T0 + 60 * D - 1), undefined);
  assert.equal(issueReason(cert(), undefined, held, T0 + 60 * D), 'RenewalDue');
});

test('a failure counts, keeps the last good validity, and backs off exponentially; success resets it', () => {
  const c = cert();
  c.status = issuedStatus(c, undefined, held, T0);
  assert.equal(c.status.renewalTime, '2030-03-02T00:00:00Z');
  const f1 = failedStatus(c, { reason: 'CAUnreachable', message: 'connect ECONNREFUSED' }, T0 + 60 * D);
  assert.equal(f1.failedAttempts, 1);
  assert.equal(f1.notAfter, c.status.notAfter, 'the certificate in place is still reported');
  const ready = f1.conditions?.find((x) => x.type === 'Ready');
  assert.deepEqual([ready?.status, ready?.reason, ready?.message], ['False', 'CAUnreachable', 'connect ECONNREFUSED']);
  const backoff = { baseMs: 30_000, maxMs: H };
  assert.equal(retryAt(f1, backoff), T0 + 60 * D + 30_000);
  const f2 = failedStatus({ ...c, status: f1 }, { reason: 'CAUnreachable', message: 'again' }, T0 + 60 * D + 30_000);
  assert.equal(retryAt(f2, backoff), T0 + 60 * D + 30_000 + 60_000);
  const f9 = { ...f2, failedAttempts: 60 };
  assert.equal(retryAt(f9, backoff), Date.parse(f2.lastFailure!.time) + H, 'capped');
  const ok = issuedStatus({ ...c, status: f2 }, undefined, held, T0 + 61 * D);
  assert.equal(ok.failedAttempts, 0);
  assert.equal(ok.lastFailure, undefined);
  assert.equal(retryAt(ok, backoff), undefined);
});
