/**
 * The control plane's PKI: its own CA and the API server's serving certificate (the CA pin that joining
 * nodes check is api/meta/ca-pin.ts). ECDSA P-256 via
 * @peculiar/x509 over Node's WebCrypto: no openssl, no hand-written ASN.1.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/** Node's global Web Crypto (the same object as `node:crypto` webcrypto), typed as the standard `Crypto`. */
const crypto: Crypto = globalThis.crypto;
x509.cryptoProvider.set(crypto);

const EC_ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING_ALG = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;
/** Back-date certificates a little so that small clock skew between machines does not reject them. */
const SKEW_MS = 5 * 60 * 1000;

/** A certificate and its private key, both PEM (the key is PKCS#8 `PRIVATE KEY`). */
export interface CertAndKey {
  certPem: string;
  keyPem: string;
}

/** Options of `createCA`. */
export interface CreateCaOptions {
  commonName: string;
  /** Validity in days; default 3650. */
  days?: number;
}

/** Creates a self-signed CA (P-256) for the control plane. */
export async function createCA(opts: CreateCaOptions): Promise<CertAndKey> {
  const keys = await crypto.subtle.generateKey(EC_ALG, true, ['sign', 'verify']);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: [{ CN: [opts.commonName] }],
    notBefore: new Date(now - SKEW_MS),
    notAfter: new Date(now + (opts.days ?? 3650) * DAY_MS),
    keys,
    signingAlgorithm: SIGNING_ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKeyPem(keys.privateKey) };
}

/** Options of `issueServingCert`. */
export interface IssueServingCertOptions {
  ca: CertAndKey;
  dnsNames: string[];
  ipAddresses: string[];
  /** Validity in days; default 365. */
  days?: number;
  /** Subject common name; default the first DNS name. */
  commonName?: string;
  /** The issue time in ms (default now): a clock's time, so that tests on a fake clock get matching validity. */
  nowMs?: number;
  /** Validity in ms after the issue time; overrides `days`. */
  lifetimeMs?: number;
}

/** Issues a TLS server certificate signed by `ca`, with the given DNS and IP subject alternative names. */
export async function issueServingCert(opts: IssueServingCertOptions): Promise<CertAndKey> {
  const caCert = new x509.X509Certificate(opts.ca.certPem);
  const caKey = await importKeyPem(opts.ca.keyPem);
  const keys = await crypto.subtle.generateKey(EC_ALG, true, ['sign', 'verify']);
  const now = opts.nowMs ?? Date.now();
  const names: x509.JsonGeneralNames = [
    ...opts.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...opts.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: [{ CN: [opts.commonName ?? opts.dnsNames[0] ?? opts.ipAddresses[0] ?? 'meshctl-control-plane'] }],
    issuer: caCert.subjectName,
    notBefore: new Date(now - SKEW_MS),
    notAfter: new Date(now + (opts.lifetimeMs ?? (opts.days ?? 365) * DAY_MS)),
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: SIGNING_ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKeyPem(keys.privateKey) };
}

/** What a certificate says about itself: its subject alternative names and validity. */
export interface CertInfo {
  dnsNames: string[];
  ipAddresses: string[];
  notBefore: Date;
  notAfter: Date;
}

/** Reads the SANs and validity of a PEM certificate. */
export function certInfo(certPem: string): CertInfo {
  const cert = new x509.X509Certificate(certPem);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const json = san?.names.toJSON() ?? [];
  return {
    dnsNames: json.filter((n) => n.type === 'dns').map((n) => n.value),
    ipAddresses: json.filter((n) => n.type === 'ip').map((n) => normalizeIp(n.value)),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
  };
}

/** True when `certPem` carries a valid signature by the CA in `caPem`. */
export async function signedBy(certPem: string, caPem: string): Promise<boolean> {
  try {
    const ca = new x509.X509Certificate(caPem);
    return await new x509.X509Certificate(certPem).verify({ publicKey: ca.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

/** Canonical text of an IP address (IPv6 compressed, lower case) so SAN sets compare reliably. */
export function normalizeIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}

async function exportKeyPem(key: CryptoKey): Promise<string> {
  const der = await crypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY') + '\n';
}

async function importKeyPem(pem: string): Promise<CryptoKey> {
  const der = x509.PemConverter.decodeFirst(pem);
  return crypto.subtle.importKey('pkcs8', der, EC_ALG, false, ['sign']);
}

/** A random positive 128-bit serial number (hex). */
function serial(): string {
  const b = randomBytes(16);
  b[0] = ((b[0] ?? 0) & 0x7f) | 0x10;
  return b.toString('hex');
}
