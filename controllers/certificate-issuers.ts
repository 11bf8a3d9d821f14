/**
 * The issuers of the Certificate controller: `internal` (signed by the mesh's CA, api/server/pki/pki.ts) here,
 * `acme` in acme-issuer.ts. An issuer turns a Certificate's names into fresh material (a new key every time);
 * it stores nothing — the controller keeps the result in the vault.
 */
import type { Clock } from '../api/meta/clock.ts';
import { realClock } from '../api/meta/clock.ts';
import { certInfo, issueServingCert, type CertAndKey } from '../api/server/pki/pki.ts';
import type { StoredMaterial } from '../api/server/certs/vault.ts';
import type { Certificate } from '../api/v1alpha1/generated/index.ts';
import { rfc3339 } from '../api/meta/timestamp.ts';

/** Issues material for a Certificate; rejects with the CA's reason when it cannot. */
export interface Issuer {
  issue(cert: Certificate): Promise<StoredMaterial>;
}

/** An issue that was refused for a reason worth showing as the Ready condition's reason. */
export class IssueError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string, opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'IssueError';
    this.reason = reason;
  }
}

/** Options of `internalIssuer`. */
export interface InternalIssuerOptions {
  /** The mesh CA (certificate and key). */
  ca: CertAndKey;
  /** Lifetime of issued certificates (default 90 days, as Let's Encrypt). */
  lifetimeMs?: number;
  /** The issue time's clock (default the real one). */
  clock?: Clock;
}

/** The default lifetime of an internally issued certificate. */
export const INTERNAL_LIFETIME_MS = 90 * 24 * 3_600_000;

/** The `internal` issuer: a P-256 leaf for the names, signed by the mesh CA, valid from the clock's now. */
export function internalIssuer(opts: InternalIssuerOptions): Issuer {
  const clock = opts.clock ?? realClock;
  return {
    async issue(cert) {
      const leaf = await issueServingCert({
        ca: opts.ca,
        dnsNames: cert.spec.dnsNames,
        ipAddresses: [],
        nowMs: clock.now(),
        lifetimeMs: opts.lifetimeMs ?? INTERNAL_LIFETIME_MS,
      });
      const info = certInfo(leaf.certPem);
      return {
        cert: leaf.certPem,
        key: leaf.keyPem,
        ca: opts.ca.certPem,
        notBefore: rfc3339(info.notBefore.getTime()),
        notAfter: rfc3339(info.notAfter.getTime()),
        issuer: 'internal',
        dnsNames: [...cert.spec.dnsNames],
      };
    },
  };
}
