/**
 * Where the control plane keeps certificate material: internal secrets in its own store (access/secrets.ts),
 * so backups of the store carry them and no API object ever holds a private key.
 *
 *   certificate.<name>  type certificate   data: cert, key, ca, notBefore, notAfter, issuer, dnsNames (comma-joined)
 *   acme.account        type acme-account  data: key (PEM), directoryUrl it was registered with, url (the account's, once registered)
 *
 * A Certificate's secret is owned by the Certificate (deleting it deletes the key by cascade); the ACME
 * account's by the Mesh, which cannot be deleted. The Certificate controller writes through this; the material
 * endpoint (certificate-endpoints.ts) reads it for the one node allowed.
 */
import type { KubeObject } from '../../meta/types.ts';
import type { Store } from '../../store/types.ts';
import type { CertificateMaterial } from '../../wire/certificate-material.ts';
import { readSecret, writeSecret } from '../access/secrets.ts';

/** The material as kept: what the node receives, plus what it was issued for. */
export interface StoredMaterial extends CertificateMaterial {
  issuer: 'acme' | 'internal';
  dnsNames: string[];
}

/** The secret name of a Certificate's material. */
export function certificateSecretName(name: string): string {
  return `certificate.${name}`;
}

/** The secret name of the ACME account key. */
export const ACME_ACCOUNT_SECRET = 'acme.account';

/** Reads and writes certificate material and the ACME account key in the control plane's store. */
export class CertificateVault {
  private readonly store: Store;

  constructor(opts: { store: Store }) {
    this.store = opts.store;
  }

  /** The stored material of Certificate `name`, or undefined when nothing was issued yet. */
  material(name: string): StoredMaterial | undefined {
    const d = readSecret(this.store, certificateSecretName(name), 'certificate')?.data;
    if (!d?.cert || !d.key || !d.ca || !d.notBefore || !d.notAfter) return undefined;
    const issuer = d.issuer === 'acme' ? 'acme' : 'internal';
    const dnsNames = (d.dnsNames ?? '').split(',').filter(Boolean);
    return { cert: d.cert, key: d.key, ca: d.ca, notBefore: d.notBefore, notAfter: d.notAfter, issuer, dnsNames };
  }

  /** Stores newly issued material of `certificate` (its owner); resolves once durable. */
  async saveMaterial(certificate: KubeObject, m: StoredMaterial): Promise<void> {
    const { dnsNames, ...rest } = m;
    await writeSecret(this.store, {
      name: certificateSecretName(certificate.metadata.name ?? ''),
      type: 'certificate',
      owner: certificate,
      data: { ...rest, dnsNames: dnsNames.join(',') },
    });
  }

  /**
   * The ACME account key (PEM) for `directoryUrl`: the stored one, or one made by `generate` and stored (owned by
   * `mesh`) before it is used, so that the account is created once and survives restarts and restores.
   */
  async acmeAccountKey(mesh: KubeObject, directoryUrl: string, generate: () => Promise<string>): Promise<string> {
    const d = readSecret(this.store, ACME_ACCOUNT_SECRET, 'acme-account')?.data;
    if (d?.key && d.directoryUrl === directoryUrl) return d.key;
    const key = await generate();
    await writeSecret(this.store, {
      name: ACME_ACCOUNT_SECRET,
      type: 'acme-account',
      owner: mesh,
      data: { key, directoryUrl },
    });
    return key;
  }

  /** The registered account's URL for `directoryUrl` (undefined before the first registration). */
  acmeAccountUrl(directoryUrl: string): string | undefined {
    const d = readSecret(this.store, ACME_ACCOUNT_SECRET, 'acme-account')?.data;
    return d?.directoryUrl === directoryUrl && d.url ? d.url : undefined;
  }

  /** Records the account URL once registered, so later orders skip registration (and its update of the account). */
  async saveAcmeAccountUrl(mesh: KubeObject, url: string): Promise<void> {
    const d = readSecret(this.store, ACME_ACCOUNT_SECRET, 'acme-account')?.data;
    if (!d?.key || d.url === url) return;
    await writeSecret(this.store, {
      name: ACME_ACCOUNT_SECRET,
      type: 'acme-account',
      owner: mesh,
      data: { ...d, url },
    });
  }
}
