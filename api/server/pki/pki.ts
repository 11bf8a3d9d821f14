/**
 * The control plane's PKI: its own CA and the API server's serving certificate (the CA pin that joining
 * nodes check is api/meta/ca-pin.ts). ECDSA P-256, made with @peculiar/x509 over Node's WebCrypto: no
 * openssl, no hand-written ASN.1. Reading a certificate (`certInfo`, `signedBy`: every start checks the
 * serving certificate) goes through node:crypto's X509Certificate, so @peculiar/x509 is loaded only when a
 * certificate is made (a first start, a renewal): loading it took about a quarter of the control plane's start.
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';

/** Node's global Web Crypto (the same object as `node:crypto` webcrypto), typed as the standard `Crypto`. */
const crypto: Crypto = globalThis.crypto;

let peculiar: Promise<typeof X509> | undefined;
/** @peculiar/x509 (with the reflect-metadata it needs) over Node's WebCrypto, loaded by the first certificate made. */
function loadX509(): Promise<typeof X509> {
  return (peculiar ??= import('reflect-metadata')
    .then(() => import('@peculiar/x509'))
    .then((x509) => {
      x509.cryptoProvider.set(crypto);
      return x509;
    }));
}

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
  const x509 = await loadX509();
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
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(opts.ca.certPem);
  const caKey = await importKeyPem(opts.ca.keyPem);
  const keys = await crypto.subtle.generateKey(EC_ALG, true, ['sign', 'verify']);
  const now = opts.nowMs ?? Date.now();
  const names: X509.JsonGeneralNames = [
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
  const cert = new X509Certificate(certPem);
  const names = subjectAltNames(cert.subjectAltName ?? '');
  return {
    dnsNames: names.filter((n) => n.type === 'DNS').map((n) => n.value),
    ipAddresses: names.filter((n) => n.type === 'IP Address').map((n) => normalizeIp(n.value)),
    // OpenSSL's text, e.g. `Dec  2 20:19:12 2026 GMT`, which Date parses.
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
  };
}

/**
 * The entries of node:crypto's `subjectAltName` text: `DNS:a.example, IP Address:127.0.0.1, …`, where a value that
 * holds a comma, a quote or another character needing it is a JSON string (`DNS:"a,b"`), as Node writes it.
 */
export function subjectAltNames(text: string): Array<{ type: string; value: string }> {
  const out: Array<{ type: string; value: string }> = [];
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(':', i);
    if (colon < 0) throw new Error(`unreadable subjectAltName: ${text}`);
    const type = text.slice(i, colon);
    let value: string;
    let end: number;
    if (text[colon + 1] === '"') {
      const m = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(colon + 1));
      if (!m) throw new Error(`unreadable subjectAltName: ${text}`);
      value = JSON.parse(m[0]) as string;
      end = colon + 1 + m[0].length;
    } else {
      end = text.indexOf(', ', colon + 1);
      if (end < 0) end = text.length;
      value = text.slice(colon + 1, end);
    }
    out.push({ type, value });
    i = end + 2;
  }
  return out;
}

/** True when `certPem` carries a valid signature by the CA in `caPem`. */
export async function signedBy(certPem: string, caPem: string): Promise<boolean> {
  try {
    return new X509Certificate(certPem).verify(new X509Certificate(caPem).publicKey);
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
  const x509 = await loadX509();
  const der = await crypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY') + '\n';
}

async function importKeyPem(pem: string): Promise<CryptoKey> {
  const x509 = await loadX509();
  const der = x509.PemConverter.decodeFirst(pem);
  return crypto.subtle.importKey('pkcs8', der, EC_ALG, false, ['sign']);
}

/** A random positive 128-bit serial number (hex). */
function serial(): string {
  const b = randomBytes(16);
  b[0] = ((b[0] ?? 0) & 0x7f) | 0x10;
  return b.toString('hex');
}
