/**
 * The `acme` issuer, through acme-client v5 (see ../shared recipes: acme-pebble.md): the directory URL and
 * e-mail of `Mesh.spec.certificates.acme`, HTTP-01 only. The account key is generated once and kept in the
 * control plane's store (CertificateVault), so the account survives restarts and restores. While an order is
 * pending, each challenge's key authorization is kept in memory (AcmeChallenges), where the node that serves
 * the name fetches it to answer the CA on its plain-HTTP port.
 *
 * acme-client retries a network error itself (5 times over 75 s) and then fails with an unrelated TypeError;
 * this issuer turns that retry down to one quick one and gives each request a 30 s timeout (globals of
 * acme-client's own axios instance: the controller's backoff does the retrying), and reports the network error it
 * saw as `CAUnreachable`.
 */
import type * as AcmeClient from 'acme-client';
import type { AcmeChallenges } from '../api/server/certs/acme-challenges.ts';
import type { CertificateVault } from '../api/server/certs/vault.ts';
import { rfc3339 } from '../api/meta/timestamp.ts';
import type { Certificate, Mesh } from '../api/v1alpha1/generated/index.ts';
import { IssueError, type Issuer } from './certificate-issuers.ts';

/** Options of `acmeIssuer`. */
export interface AcmeIssuerOptions {
  vault: CertificateVault;
  challenges: AcmeChallenges;
  /** The Mesh as the controller last read it (its spec.certificates.acme; the owner of the account key). */
  mesh: () => Mesh | undefined;
  /** Order polling backoff in ms (acme-client's default is 5 s … 30 s). */
  pollMs?: { min: number; max: number };
}

type Acme = typeof AcmeClient;
/** acme-client's own settings on its axios instance (set at run time by acme-client, untyped there). */
type AcmeDefaults = Acme['axios']['defaults'] & { acmeSettings?: Record<string, number> };

let lastNetworkError = '';
let loaded: Promise<Acme> | undefined;
/**
 * acme-client, loaded and set up by the first issuance: with its axios and node-forge it took about a third of the
 * control plane's start-up (~160 ms of ~490 ms to serving), which a mesh without ACME certificates never needs.
 */
function loadAcme(): Promise<Acme> {
  return (loaded ??= import('acme-client').then((acme) => {
    acme.setLogger((line) => {
      const m = /^Caught (\S+), retry attempt/.exec(line);
      if (m?.[1]) lastNetworkError = m[1];
    });
    const defaults: AcmeDefaults = acme.axios.defaults;
    defaults.acmeSettings = { ...defaults.acmeSettings, retryMaxAttempts: 1, retryDefaultDelay: 1 };
    // No request to the CA may hang a worker: axios waits forever by default.
    defaults.timeout = 30_000;
    return acme;
  }));
}

/** The `acme` issuer (see the module comment). */
export function acmeIssuer(opts: AcmeIssuerOptions): Issuer {
  return {
    async issue(cert) {
      const mesh = opts.mesh();
      const cfg = mesh?.spec?.certificates?.acme;
      if (!mesh || !cfg) {
        throw new IssueError('ACMENotConfigured', 'issuer acme needs Mesh spec.certificates.acme.directoryUrl');
      }
      const acme = await loadAcme();
      const accountKey = await opts.vault.acmeAccountKey(mesh, cfg.directoryUrl, async () =>
        (await acme.crypto.createPrivateEcdsaKey()).toString(),
      );
      // Registered once: with the account URL, acme-client skips registration, which for an existing account
      // is an update that a CA refuses when it changes nothing (pebble: "empty update", without an e-mail).
      const accountUrl = opts.vault.acmeAccountUrl(cfg.directoryUrl);
      const client = new acme.Client({
        directoryUrl: cfg.directoryUrl,
        accountKey,
        ...(accountUrl ? { accountUrl } : {}),
        backoffMin: opts.pollMs?.min ?? 1000,
        backoffMax: opts.pollMs?.max ?? 10_000,
        backoffAttempts: 30,
      });
      try {
        const issued = await order(acme, client, cert, cfg.email, opts.challenges);
        if (!accountUrl) await opts.vault.saveAcmeAccountUrl(mesh, client.getAccountUrl());
        return issued;
      } catch (e) {
        throw asIssueError(e, cfg.directoryUrl);
      }
    },
  };
}

async function order(
  acme: Acme,
  client: AcmeClient.Client,
  cert: Certificate,
  email: string | undefined,
  challenges: AcmeChallenges,
): Promise<Awaited<ReturnType<Issuer['issue']>>> {
  const name = cert.metadata.name ?? '';
  const [keyBuf, csr] = await acme.crypto.createCsr({
    commonName: cert.spec.dnsNames[0],
    altNames: cert.spec.dnsNames,
  });
  const chain = await client.auto({
    csr,
    ...(email ? { email } : {}),
    termsOfServiceAgreed: true,
    challengePriority: ['http-01'],
    // acme-client's own check would GET http://<name>:80 through this machine's resolver; the CA checks.
    skipChallengeVerification: true,
    challengeCreateFn: async (_authz, ch, keyAuth) => challenges.set(name, ch.token, keyAuth),
    challengeRemoveFn: async (_authz, ch) => challenges.delete(name, ch.token),
  });
  const certs = acme.crypto.splitPemChain(chain);
  const leaf = acme.crypto.readCertificateInfo(chain);
  return {
    cert: certs.join('\n') + '\n',
    key: keyBuf.toString(),
    ca: (certs[certs.length - 1] ?? '') + '\n',
    notBefore: rfc3339(leaf.notBefore.getTime()),
    notAfter: rfc3339(leaf.notAfter.getTime()),
    issuer: 'acme',
    dnsNames: [...cert.spec.dnsNames],
  };
}

/** The CA's refusal as CARejected with its detail; a failure to reach it as CAUnreachable. */
function asIssueError(e: unknown, directoryUrl: string): IssueError {
  if (e instanceof IssueError) return e;
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as NodeJS.ErrnoException).code;
  if (code || /reading 'config'/.test(err.message)) {
    const what = code ?? (lastNetworkError || 'no response');
    return new IssueError('CAUnreachable', `could not reach the ACME CA at ${directoryUrl}: ${what}`, { cause: e });
  }
  return new IssueError('CARejected', `the ACME CA refused: ${err.message}`, { cause: e });
}
