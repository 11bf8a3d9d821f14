/**
 * The body of `GET /apis/meshctl.dev/v1alpha1/certificates/<name>/material`: a Certificate's issued chain and
 * private key, served only to the node that serves it (the Certificate's spec.node; 403 for any other node and
 * for the admin, 404 while nothing is issued yet). The control plane keeps this material in its store as an
 * internal secret, never in an API object; the agent keeps what it fetched in its own store and writes the
 * files 0600.
 */

/** The path of a Certificate's material endpoint (relative to the server URL). */
export function certificateMaterialPath(name: string): string {
  return `/apis/meshctl.dev/v1alpha1/certificates/${encodeURIComponent(name)}/material`;
}

/** The path where the node fetches the key authorization of a pending ACME HTTP-01 challenge. */
export function acmeChallengePath(name: string, token: string): string {
  return `/apis/meshctl.dev/v1alpha1/certificates/${encodeURIComponent(name)}/acme-challenge/${encodeURIComponent(token)}`;
}

/** A Certificate's material, as the material endpoint returns it. */
export interface CertificateMaterial {
  /** PEM: the leaf certificate followed by its intermediates. */
  cert: string;
  /** PEM: the leaf's private key (PKCS#8). */
  key: string;
  /** PEM: the issuing CA's root (the mesh CA for `internal`, the ACME CA's root when known, else its top intermediate). */
  ca: string;
  /** RFC 3339: start of the leaf's validity. */
  notBefore: string;
  /** RFC 3339: end of the leaf's validity. */
  notAfter: string;
}

/** Checks a decoded JSON body is a CertificateMaterial; throws an Error naming the first bad field. */
export function parseCertificateMaterial(body: unknown): CertificateMaterial {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new Error('certificate material must be a JSON object');
  const o = body as Record<string, unknown>;
  const field = (f: keyof CertificateMaterial): string => {
    const v = o[f];
    if (typeof v !== 'string' || v === '') throw new Error(`certificate material: "${f}" must be a non-empty string`);
    if ((f === 'notBefore' || f === 'notAfter') && Number.isNaN(Date.parse(v)))
      throw new Error(`certificate material: "${f}" must be an RFC 3339 time`);
    return v;
  };
  return {
    cert: field('cert'),
    key: field('key'),
    ca: field('ca'),
    notBefore: field('notBefore'),
    notAfter: field('notAfter'),
  };
}
