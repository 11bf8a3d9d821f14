/**
 * The certificate parts of the control-plane process, wired in one place for main.ts: the endpoints' vault
 * and pending ACME challenges (before the app is built), then the Certificate controller with both issuers
 * and the recovery clock controller (once the manager exists), whose metrics the admin's `/metrics` serves.
 */
import type { Store } from '../api/store/types.ts';
import { AcmeChallenges } from '../api/server/certs/acme-challenges.ts';
import type { CertificateEndpoints } from '../api/server/certs/certificate-endpoints.ts';
import { CertificateVault } from '../api/server/certs/vault.ts';
import { certInfo, type CertAndKey } from '../api/server/pki/pki.ts';
import type { Expiring } from '../api/meta/recovery-clock.ts';
import { acmeIssuer } from './acme-issuer.ts';
import { createCertificateController } from './certificate-controller.ts';
import { internalIssuer } from './certificate-issuers.ts';
import { createRecoveryClockController } from './recovery-clock-controller.ts';
import type { Manager } from './runtime/manager.ts';

/** Certificate material (never in an API object) for the certificate's node, and pending ACME challenges. */
export function certificateEndpoints(store: Store): CertificateEndpoints {
  return { vault: new CertificateVault({ store }), challenges: new AcmeChallenges() };
}

/** Options of `addCertificateControllers`. */
export interface CertificateControllersOptions {
  manager: Manager;
  endpoints: CertificateEndpoints;
  /** The mesh CA: the internal issuer signs with it, and its notAfter counts on the recovery clock. */
  ca: CertAndKey;
  /** The serving certificate's notAfter now (absent when serving plain HTTP). */
  servingNotAfter?: () => number;
}

/** Adds the Certificate and recovery clock controllers; returns the Prometheus text for `/metrics`. */
export function addCertificateControllers(opts: CertificateControllersOptions): () => string {
  const { manager, endpoints } = opts;
  const issuers = {
    internal: internalIssuer({ ca: opts.ca }),
    acme: acmeIssuer({ ...endpoints, mesh: () => manager.informerFor('meshes').get('mesh') }),
  };
  manager.add(createCertificateController({ manager, vault: endpoints.vault, issuers }));
  const caNotAfter = certInfo(opts.ca.certPem).notAfter.getTime();
  const extra = (): Expiring[] => [
    ...(opts.servingNotAfter
      ? [{ kind: 'ServingCertificate' as const, name: 'serving', notAfter: opts.servingNotAfter() }]
      : []),
    { kind: 'CertificateAuthority', name: 'ca', notAfter: caNotAfter },
  ];
  const clock = createRecoveryClockController({ manager, extra });
  manager.add(clock.controller);
  return clock.metrics;
}
