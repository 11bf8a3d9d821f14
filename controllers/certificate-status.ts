/**
 * The Certificate controller's decisions, pure: which issuer, how long before notAfter to renew, whether the
 * held material must be (re)issued and why, when a failed attempt may be retried (exponential backoff on
 * status.failedAttempts, so it survives a restart), and the status after a success or a failure.
 */
import { setCondition } from '../api/meta/conditions.ts';
import { parseDuration } from '../api/meta/duration.ts';
import { rfc3339 } from '../api/meta/timestamp.ts';
import type { Certificate, CertificateStatus, Mesh } from '../api/v1alpha1/generated/index.ts';

/** Condition types of a Certificate. */
export const READY = 'Ready';
export const ISSUING = 'Issuing';

/** The retry backoff of failed attempts: base × 2^(failures−1), capped (default 30 s … 6 h). */
export interface RetryBackoff {
  baseMs: number;
  maxMs: number;
}

/** The default retry backoff. */
export const DEFAULT_RETRY: RetryBackoff = { baseMs: 30_000, maxMs: 6 * 3_600_000 };

/** What the control plane holds for a Certificate (from the vault), in ms. */
export interface Held {
  notBefore: number;
  notAfter: number;
  issuer: 'acme' | 'internal';
  dnsNames: string[];
}

/** The issuer of a Certificate: its own, else the Mesh's, else internal. */
export function issuerOf(cert: Certificate, mesh: Mesh | undefined): 'acme' | 'internal' {
  return cert.spec.issuer ?? mesh?.spec?.certificates?.issuer ?? 'internal';
}

/**
 * How long before notAfter to renew: spec.renewBefore, else the Mesh's, else a third of the lifetime (as
 * cert-manager); a value not shorter than the lifetime also falls back to a third.
 */
export function renewBeforeMs(cert: Certificate, mesh: Mesh | undefined, lifetimeMs: number): number {
  const text = cert.spec.renewBefore ?? mesh?.spec?.certificates?.renewBefore;
  const third = Math.floor(lifetimeMs / 3);
  if (!text) return third;
  const ms = parseDuration(text);
  return ms < lifetimeMs ? ms : third;
}

/** When the held material is due for renewal (ms). */
export function renewalAt(cert: Certificate, mesh: Mesh | undefined, held: Held): number {
  return held.notAfter - renewBeforeMs(cert, mesh, held.notAfter - held.notBefore);
}

/** Why the Certificate must be issued now, or undefined when what is held is good until its renewal time. */
export function issueReason(
  cert: Certificate,
  mesh: Mesh | undefined,
  held: Held | undefined,
  now: number,
): string | undefined {
  if (!held) return 'NotIssued';
  if (held.issuer !== issuerOf(cert, mesh)) return 'IssuerChanged';
  const want = [...cert.spec.dnsNames].sort().join(',');
  if ([...held.dnsNames].sort().join(',') !== want) return 'DNSNamesChanged';
  return now >= renewalAt(cert, mesh, held) ? 'RenewalDue' : undefined;
}

/** When the next attempt after `failedAttempts` consecutive failures (the last at `lastFailure`) may run (ms). */
export function retryAt(status: CertificateStatus | undefined, backoff: RetryBackoff): number | undefined {
  const n = status?.failedAttempts ?? 0;
  const last = status?.lastFailure?.time;
  if (n === 0 || !last) return undefined;
  const delay = n >= 50 ? backoff.maxMs : Math.min(backoff.baseMs * 2 ** (n - 1), backoff.maxMs);
  return Date.parse(last) + delay;
}

/** The status while an attempt runs: Issuing=True, the rest kept. */
export function issuingStatus(cert: Certificate, why: string, now: number): CertificateStatus {
  const status = cert.status ?? {};
  const message = why === 'RenewalDue' ? 'renewing the certificate' : `issuing a certificate (${why})`;
  const conditions = setCondition(
    status.conditions ?? [],
    { type: ISSUING, status: 'True', reason: why, message },
    rfc3339(now),
  );
  return { ...status, observedGeneration: cert.metadata.generation ?? 0, conditions };
}

/** The status after a successful issuance of `held`. */
export function issuedStatus(cert: Certificate, mesh: Mesh | undefined, held: Held, now: number): CertificateStatus {
  const t = rfc3339(now);
  const notAfter = rfc3339(held.notAfter);
  let conditions = setCondition(
    cert.status?.conditions ?? [],
    { type: READY, status: 'True', reason: 'Issued', message: `valid until ${notAfter} (${held.issuer} issuer)` },
    t,
  );
  conditions = setCondition(
    conditions,
    { type: ISSUING, status: 'False', reason: 'Issued', message: 'the certificate is issued' },
    t,
  );
  return {
    observedGeneration: cert.metadata.generation ?? 0,
    notBefore: rfc3339(held.notBefore),
    notAfter,
    renewalTime: rfc3339(renewalAt(cert, mesh, held)),
    failedAttempts: 0,
    conditions,
  };
}

/** A failed attempt: the reason (CAUnreachable, CARejected, IssuanceFailed) and the CA's message. */
export interface Failure {
  reason: string;
  message: string;
}

/** The status after a failed attempt: Ready=False with the failure, failedAttempts + 1, lastFailure. */
export function failedStatus(cert: Certificate, failure: Failure, now: number): CertificateStatus {
  const t = rfc3339(now);
  const status = cert.status ?? {};
  const message = failure.message.slice(0, 4000);
  let conditions = setCondition(
    status.conditions ?? [],
    { type: READY, status: 'False', reason: failure.reason, message },
    t,
  );
  conditions = setCondition(
    conditions,
    {
      type: ISSUING,
      status: 'False',
      reason: failure.reason,
      message: 'the last attempt failed; retrying with backoff',
    },
    t,
  );
  return {
    ...status,
    observedGeneration: cert.metadata.generation ?? 0,
    failedAttempts: (status.failedAttempts ?? 0) + 1,
    lastFailure: { time: t, message },
    conditions,
  };
}
