/**
 * What `GET /apis/meshctl.dev/v1alpha1/certificates/{name}/material` answers (issue 10 contract §2): the
 * issued chain, its private key and the issuing CA, in PEM, with the validity of the leaf. Only the node
 * named in the Certificate's spec.node may read it; it is never part of any API object.
 */

/** The material of one issued Certificate. */
export interface CertificateMaterial {
  /** The leaf followed by its chain (PEM). */
  cert: string;
  /** The private key (PEM). */
  key: string;
  /** The issuing CA or root (PEM). */
  ca: string;
  /** RFC 3339 start of the leaf's validity. */
  notBefore: string;
  /** RFC 3339 end of the leaf's validity. */
  notAfter: string;
}

/** The path of a Certificate's material under the API root. */
export function materialPath(name: string): string {
  return `/apis/meshctl.dev/v1alpha1/certificates/${encodeURIComponent(name)}/material`;
}

/** The path of a pending ACME HTTP-01 challenge's key authorization (contract §3). */
export function acmeChallengePath(name: string, token: string): string {
  return `/apis/meshctl.dev/v1alpha1/certificates/${encodeURIComponent(name)}/acme-challenge/${encodeURIComponent(token)}`;
}

/** True when `v` has the material's shape (strings in every field). */
export function isCertificateMaterial(v: unknown): v is CertificateMaterial {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return ['cert', 'key', 'ca', 'notBefore', 'notAfter'].every((k) => typeof o[k] === 'string');
}
