/**
 * The control plane's files under its data directory, created on first start and reused afterwards:
 *
 *   pki/ca.crt, pki/ca.key (0600)          its own CA (kept for good: nodes pin its key by hash)
 *   pki/server.crt, pki/server.key (0600)  the serving certificate, re-issued when the listen address
 *                                          needs other names, when it is not signed by the CA, or when it
 *                                          expires within 30 days
 *   pki/session-ticket.key (0600)          the key of the TLS session tickets it issues (ensureTicketKeys), kept
 *                                          so that clients resume their sessions after a restart
 *   auth/admin-token.sha256 (0600)         the admin token, stored only as its SHA-256
 *   admin.meshconfig (0600)                server URL, CA and admin token, like k3s's kubeconfig; and the
 *                                          local socket (below) as its `meshctl.dev/local-socket` extension
 *   run/api.sock (0600, in run/ 0700)      the API on a local Unix socket, served while the control plane runs
 *                                          (api/server/listen-unix.ts)
 *
 * The admin token is only known in clear from admin.meshconfig: when that file is gone (or does not match
 * the stored hash) a new token is generated and the log says so. Every write is atomic.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { parseMeshconfig, renderMeshconfig } from '../../client/meshconfig.ts';
import { writeFileAtomicSync } from '../../meta/atomic-file.ts';
import { hashToken } from '../access/auth.ts';
import type { Logger } from '../../meta/logger.ts';
import { silentLogger } from '../../meta/logger.ts';
import type { CertAndKey } from './pki.ts';
import { certInfo, createCA, issueServingCert, normalizeIp, signedBy } from './pki.ts';
import { servingNames, type ServingNames } from './serving-names.ts';

/** A serving certificate is re-issued this long before it expires (at start-up, and while running: serving-renewal.ts). */
export const SERVING_RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/** Options of `ensureControlPlaneFiles`. */
export interface ControlPlaneFilesOptions {
  dataDir: string;
  /** The host the server listens on (decides the serving certificate's names). */
  listenHost: string;
  /** More names it is reached by (DNS names or IP addresses, e.g. from `meshctl init --san`): added to the serving certificate. */
  extraSans?: string[];
  logger?: Logger;
}

/** What the server needs from its data directory. */
export interface ControlPlaneFiles {
  dataDir: string;
  meshconfigPath: string;
  ca: CertAndKey;
  serving: CertAndKey;
  /** The key of the TLS session tickets (48 bytes: Node's `ticketKeys`). */
  ticketKeys: Buffer;
  /** The admin token in clear (from admin.meshconfig, or newly generated). */
  adminToken: string;
  adminTokenSha256: string;
}

/** Where each file lives under a data directory. */
export function controlPlanePaths(
  dataDir: string,
): Record<
  'pki' | 'caCert' | 'caKey' | 'cert' | 'key' | 'ticketKeys' | 'tokenHash' | 'meshconfig' | 'store' | 'socket',
  string
> {
  return {
    pki: join(dataDir, 'pki'),
    caCert: join(dataDir, 'pki', 'ca.crt'),
    caKey: join(dataDir, 'pki', 'ca.key'),
    cert: join(dataDir, 'pki', 'server.crt'),
    key: join(dataDir, 'pki', 'server.key'),
    ticketKeys: join(dataDir, 'pki', 'session-ticket.key'),
    tokenHash: join(dataDir, 'auth', 'admin-token.sha256'),
    meshconfig: join(dataDir, 'admin.meshconfig'),
    store: join(dataDir, 'store'),
    socket: resolve(dataDir, 'run', 'api.sock'),
  };
}

/** Creates what is missing (CA, serving certificate, admin token) and returns it all; call before listening. */
export async function ensureControlPlaneFiles(opts: ControlPlaneFilesOptions): Promise<ControlPlaneFiles> {
  const logger = opts.logger ?? silentLogger;
  const p = controlPlanePaths(opts.dataDir);
  for (const dir of [opts.dataDir, p.pki, dirname(p.tokenHash)]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = await ensureCa(p, logger);
  const serving = await ensureServingCert(p, ca, withSans(servingNames(opts.listenHost), opts.extraSans ?? []), logger);
  const { token, sha256 } = ensureAdminToken(p, logger);
  return {
    dataDir: opts.dataDir,
    meshconfigPath: p.meshconfig,
    ca,
    serving,
    ticketKeys: ensureTicketKeys(p.ticketKeys, logger),
    adminToken: token,
    adminTokenSha256: sha256,
  };
}

/**
 * Writes admin.meshconfig for `serverUrl` (after listening, when the port is known) unless it already says that.
 * With `socketPath` (the control plane and `meshctl init`: `controlPlanePaths(dir).socket`), it also names the local
 * socket, which clients on this machine try first.
 */
export function writeAdminMeshconfig(
  files: ControlPlaneFiles,
  serverUrl: string,
  logger: Logger = silentLogger,
  socketPath?: string,
): boolean {
  const https = serverUrl.startsWith('https:');
  const text = renderMeshconfig({
    server: serverUrl,
    token: files.adminToken,
    ...(https ? { caData: files.ca.certPem } : {}),
    ...(socketPath ? { socketPath } : {}),
  });
  if (readIfExists(files.meshconfigPath) === text) return false;
  writeFileAtomicSync(files.meshconfigPath, text, { mode: 0o600 });
  logger.info('Wrote admin meshconfig', { path: files.meshconfigPath, server: serverUrl, socket: socketPath });
  return true;
}

async function ensureCa(p: ReturnType<typeof controlPlanePaths>, logger: Logger): Promise<CertAndKey> {
  const certPem = readIfExists(p.caCert);
  const keyPem = readIfExists(p.caKey);
  if (certPem && keyPem) return { certPem, keyPem };
  const ca = await createCA({ commonName: 'meshctl-ca' });
  writeFileAtomicSync(p.caKey, ca.keyPem, { mode: 0o600 });
  writeFileAtomicSync(p.caCert, ca.certPem, { mode: 0o644 });
  logger.info('Created CA', { path: p.caCert, notAfter: certInfo(ca.certPem).notAfter.toISOString() });
  return ca;
}

async function ensureServingCert(
  p: ReturnType<typeof controlPlanePaths>,
  ca: CertAndKey,
  want: ServingNames,
  logger: Logger,
): Promise<CertAndKey> {
  const certPem = readIfExists(p.cert);
  const keyPem = readIfExists(p.key);
  const why = !certPem || !keyPem ? 'missing' : await staleReason(certPem, ca, want);
  if (!why) return { certPem: certPem!, keyPem: keyPem! };
  const serving = await issueServingCert({ ca, ...want, days: 365, commonName: 'meshctl-control-plane' });
  writeFileAtomicSync(p.key, serving.keyPem, { mode: 0o600 });
  writeFileAtomicSync(p.cert, serving.certPem, { mode: 0o644 });
  logger.info('Issued serving certificate', {
    reason: why,
    ...want,
    notAfter: certInfo(serving.certPem).notAfter.toISOString(),
  });
  return serving;
}

/** The names for the listen address plus `extra` (each an IP address or a DNS name), without duplicates. */
function withSans(names: ServingNames, extra: string[]): ServingNames {
  const ips = extra
    .map((s) => s.replace(/^\[|\]$/g, ''))
    .filter((s) => isIP(s))
    .map(normalizeIp);
  const dns = extra.filter((s) => !isIP(s.replace(/^\[|\]$/g, ''))).map((s) => s.toLowerCase());
  return {
    dnsNames: [...new Set([...names.dnsNames, ...dns])],
    ipAddresses: [...new Set([...names.ipAddresses, ...ips])],
  };
}

/** Why an existing serving certificate must be re-issued, or undefined when it is fine. */
async function staleReason(
  certPem: string,
  ca: CertAndKey,
  want: { dnsNames: string[]; ipAddresses: string[] },
): Promise<string | undefined> {
  let info;
  try {
    info = certInfo(certPem);
  } catch {
    return 'unreadable';
  }
  if (!(await signedBy(certPem, ca.certPem))) return 'not signed by the CA';
  if (info.notAfter.getTime() - Date.now() < SERVING_RENEW_BEFORE_MS) return 'expires soon';
  const missing = [
    ...want.dnsNames.filter((n) => !info.dnsNames.includes(n)),
    ...want.ipAddresses.filter((ip) => !info.ipAddresses.includes(normalizeIp(ip))),
  ];
  return missing.length ? `names missing: ${missing.join(', ')}` : undefined;
}

/** The length of Node's `ticketKeys`: a 16-byte key name, a 16-byte HMAC secret and a 16-byte AES key. */
export const TICKET_KEYS_BYTES = 48;

/**
 * The key the control plane encrypts its TLS session tickets with, kept in `path` (base64, 0600) across restarts.
 * Node otherwise makes a new one at every start, and after a restart every client's session is refused: 5,000 agents
 * reconnecting to a restarted control plane each made a full handshake (the certificate sent, signed, and verified on
 * the agent's side) where they can resume (bench/RESULTS.md §9). A file that does not hold such a key (damaged,
 * truncated) is replaced, and the log says so: it costs each client one full handshake, as a first start does.
 * Delete the file and restart to invalidate every session issued so far.
 */
export function ensureTicketKeys(path: string, logger: Logger): Buffer {
  const text = readIfExists(path);
  const stored = text === undefined ? undefined : Buffer.from(text.trim(), 'base64');
  if (stored?.length === TICKET_KEYS_BYTES && stored.toString('base64') === text?.trim()) return stored;
  const keys = randomBytes(TICKET_KEYS_BYTES);
  writeFileAtomicSync(path, keys.toString('base64') + '\n', { mode: 0o600 });
  if (text === undefined) logger.info('Created the TLS session ticket key', { path });
  else logger.error('Replaced the TLS session ticket key: the file did not hold one', { path });
  return keys;
}

function ensureAdminToken(p: ReturnType<typeof controlPlanePaths>, logger: Logger): { token: string; sha256: string } {
  const storedHash = readIfExists(p.tokenHash)?.trim();
  const known = tokenFromMeshconfig(p.meshconfig);
  if (storedHash && known && hashToken(known) === storedHash) return { token: known, sha256: storedHash };
  const token = randomBytes(32).toString('base64url');
  const sha256 = hashToken(token);
  writeFileAtomicSync(p.tokenHash, sha256 + '\n', { mode: 0o600 });
  const why = !storedHash
    ? 'first start'
    : known
      ? 'admin.meshconfig holds another token'
      : 'admin.meshconfig is missing';
  logger.info('Generated admin token', { reason: why, meshconfig: p.meshconfig });
  return { token, sha256 };
}

function tokenFromMeshconfig(path: string): string | undefined {
  const text = readIfExists(path);
  if (!text) return undefined;
  try {
    return parseMeshconfig(text, path).token;
  } catch {
    return undefined;
  }
}

function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}
