/**
 * The shared test harness: the real API server over a real store in a temp dir, in-process on port 0
 * (`startServer`), or the real `mesh-control-plane` process (`spawnControlPlane`); plus a raw HTTP(S)
 * request helper and a watch-stream reader that depend on nothing but Node.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import {
  Agent as HttpAgent,
  request as httpReq,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsReq } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClientConfig } from '../api/client/types.ts';
import { loadMeshconfig } from '../api/client/meshconfig.ts';
import { createApp, type App } from '../api/server/app.ts';
import type { InflightLimits } from '../api/server/http/inflight.ts';
import type { ListPagesOptions } from '../api/server/resources/list-pages.ts';
import { bearerAuthenticator, hashToken, type Authorizer, type Identity } from '../api/server/access/auth.ts';
import { controlPlanePaths, ensureControlPlaneFiles, writeAdminMeshconfig } from '../api/server/pki/first-start.ts';
import { listen } from '../api/server/listen.ts';
import { meshAccess } from '../api/server/access/mesh-access.ts';
import type { JoinRate } from '../api/server/access/join-handler.ts';
import type { EventLimits } from '../api/server/access/event-quota.ts';
import type { Clock } from '../api/meta/clock.ts';
import { silentLogger, type Logger } from '../api/meta/logger.ts';
import { createBackupService, type BackupService } from '../api/server/backup/backup-service.ts';
import { openStore, type FileStore, type OpenStoreOptions } from '../api/store/index.ts';
import type { CertAndKey } from '../api/server/pki/pki.ts';
import { AcmeChallenges } from '../api/server/certs/acme-challenges.ts';
import type { CertificateEndpoints } from '../api/server/certs/certificate-endpoints.ts';
import { CertificateVault } from '../api/server/certs/vault.ts';

/** The repository root (where `controllers/main.ts` lives). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Options of `startServer`. */
export interface StartServerOptions {
  /** Plain HTTP instead of HTTPS. */
  insecure?: boolean;
  /** Reuse this data directory (it is then not removed by `stop()`). */
  dataDir?: string;
  /** Store options besides `dir` (e.g. `{ eventLogCapacity: 5 }`). */
  store?: Omit<OpenStoreOptions, 'dir'>;
  watchHeartbeatMs?: number;
  maxBodyBytes?: number;
  /** Bounds on concurrent requests and watches (api/server/http/inflight.ts). */
  inflight?: Partial<InflightLimits>;
  /** Bound on the bytes of the lists being sent (api/server/resources/shared-lists.ts). */
  maxListBytes?: number;
  /** TTL, count bound and clock of the snapshots of paged lists (api/server/resources/list-pages.ts). */
  listPages?: ListPagesOptions;
  /** Extra bearer tokens and who they are (e.g. `{ 'tok-a': { kind: 'node', name: 'a' } }`). */
  tokens?: Record<string, Identity>;
  authorize?: Authorizer;
  /**
   * Serve the mesh's access rules as the control plane does (api/server/access/mesh-access.ts): node credentials
   * issued by `POST /join`, the Node authorizer, NodeRestriction, `/cluster-info` and JoinToken creation.
   * `tokens` still work; `authorize` still wins.
   */
  meshAccess?: boolean;
  /** The clock of meshAccess's rate limits and quotas (e.g. a FakeClock). */
  clock?: Clock;
  /** meshAccess's join rate limits (default the control plane's). */
  joinRate?: JoinRate;
  /** meshAccess's event quota of a node (default the control plane's). */
  eventLimits?: EventLimits;
  /** Serve a Certificate's material and ACME challenges (api/server/certs/) from a vault over the store. */
  certificates?: boolean;
  /** The Prometheus text of the admin's `/metrics`. */
  metrics?: () => string;
  logger?: Logger;
  /** Serve the backup endpoints (api/server/backup/), with `clock` when given. */
  backups?: boolean;
}

/** A running in-process server. */
export interface TestServer {
  url: string;
  dataDir: string;
  meshconfigPath: string;
  config: ClientConfig;
  adminToken: string;
  store: FileStore;
  app: App;
  /** The mesh CA (certificate and key), e.g. for an internal issuer. */
  ca: CertAndKey;
  /** The certificate endpoints' vault and pending challenges (with `certificates`). */
  certificates?: CertificateEndpoints;
  /** The backup service, when started with `backups`. */
  backups?: BackupService;
  /** A request with the admin token (unless `headers.authorization` is given; `null` sends none). */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string | null>): Promise<HttpResult>;
  /** Closes server and store; removes the data dir unless it was passed in. */
  stop(): Promise<void>;
}

/** Starts the real app, store and PKI on 127.0.0.1, port 0 (HTTPS unless `insecure`). */
export async function startServer(opts: StartServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'meshctl-server-'));
  const files = await ensureControlPlaneFiles({ dataDir, listenHost: '127.0.0.1' });
  const store = await openStore({ dir: controlPlanePaths(dataDir).store, ...opts.store });
  const extra = new Map(Object.entries(opts.tokens ?? {}).map(([t, id]) => [hashToken(t), id]));
  const access = opts.meshAccess
    ? meshAccess({
        store,
        adminTokenSha256: files.adminTokenSha256,
        caPem: files.ca.certPem,
        ...(opts.clock ? { clock: opts.clock } : {}),
        ...(opts.joinRate ? { joinRate: opts.joinRate } : {}),
        ...(opts.eventLimits ? { eventLimits: opts.eventLimits } : {}),
      })
    : undefined;
  const certificates: CertificateEndpoints | undefined = opts.certificates
    ? { vault: new CertificateVault({ store }), challenges: new AcmeChallenges() }
    : undefined;
  const backups = opts.backups
    ? createBackupService({
        store,
        dataDir,
        logger: opts.logger ?? silentLogger,
        ...(opts.clock ? { clock: opts.clock } : {}),
      })
    : undefined;
  const byTokens = bearerAuthenticator({ adminTokenSha256: files.adminTokenSha256, resolve: (h) => extra.get(h) });
  const app = createApp({
    store,
    logsDir: join(dataDir, 'logs'),
    ...(access ?? {}),
    authenticate: access ? (req) => access.authenticate(req) ?? byTokens(req) : byTokens,
    ...(opts.authorize ? { authorize: opts.authorize } : {}),
    ...(opts.watchHeartbeatMs ? { watchHeartbeatMs: opts.watchHeartbeatMs } : {}),
    ...(opts.maxBodyBytes ? { maxBodyBytes: opts.maxBodyBytes } : {}),
    ...(opts.inflight ? { inflight: opts.inflight } : {}),
    ...(opts.maxListBytes !== undefined ? { maxListBytes: opts.maxListBytes } : {}),
    ...(opts.listPages ? { listPages: opts.listPages } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(certificates ? { certificates } : {}),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
    ...(backups ? { backups } : {}),
  });
  const tls = opts.insecure ? undefined : { cert: files.serving.certPem, key: files.serving.keyPem };
  const server = await listen({ app, host: '127.0.0.1', port: 0, ...(tls ? { tls } : {}) });
  writeAdminMeshconfig(files, server.url);
  const config = loadMeshconfig(files.meshconfigPath);
  let stopped = false;
  return {
    url: server.url,
    dataDir,
    meshconfigPath: files.meshconfigPath,
    config,
    adminToken: files.adminToken,
    store,
    app,
    ca: files.ca,
    ...(certificates ? { certificates } : {}),
    ...(backups ? { backups } : {}),
    request: (method, path, body, headers) => httpRequest(config, method, path, body, headers),
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.close();
      await store.close();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Options of `spawnControlPlane`. */
export interface SpawnOptions {
  /** Reuse this data directory (a restart); it is then not removed by `stop()`. */
  dataDir?: string;
  insecure?: boolean;
  /** `--listen` (default `127.0.0.1:0`). */
  listen?: string;
  /** How long to wait for the ready line (default 20 s). */
  timeoutMs?: number;
  /** More flags (e.g. `['--max-watches-per-client', '1']`). */
  args?: string[];
}

/** A running `mesh-control-plane` child process. */
export interface ControlPlaneProcess {
  pid: number;
  url: string;
  dataDir: string;
  meshconfigPath: string;
  config: ClientConfig;
  /** Everything the process wrote to stderr so far. */
  output(): string;
  /** SIGTERM and wait; resolves with the exit code (the data dir is removed unless it was passed in). */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<number | null>;
}

/** Runs `controllers/main.ts` through tsx and waits for its `Serving` log line. */
export async function spawnControlPlane(opts: SpawnOptions = {}): Promise<ControlPlaneProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'meshctl-cp-'));
  const args = [
    '--import',
    'tsx',
    'controllers/main.ts',
    '--data-dir',
    dataDir,
    '--listen',
    opts.listen ?? '127.0.0.1:0',
  ];
  if (opts.insecure) args.push('--insecure-http');
  args.push(...(opts.args ?? []));
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await waitForServing(() => out, exited, opts.timeoutMs ?? 20_000).catch((e: unknown) => {
    child.kill('SIGKILL');
    throw e;
  });
  const meshconfigPath = join(dataDir, 'admin.meshconfig');
  const finish = async (signal: NodeJS.Signals): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const code = await exited;
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    return code;
  };
  return {
    pid: child.pid!,
    url: ready.url,
    dataDir,
    meshconfigPath,
    config: loadMeshconfig(meshconfigPath),
    output: () => out,
    stop: () => finish('SIGTERM'),
    kill: () => finish('SIGKILL'),
  };
}

async function waitForServing(
  output: () => string,
  exited: Promise<number | null>,
  timeoutMs: number,
): Promise<{ url: string }> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void exited.then((c) => {
    exitCode = c;
  });
  while (Date.now() < deadline) {
    for (const line of output().split('\n')) {
      if (!line.startsWith('{')) continue;
      const rec = JSON.parse(line) as { msg?: string; url?: string };
      if (rec.msg === 'Serving' && rec.url) return { url: rec.url };
    }
    if (exitCode !== undefined)
      throw new Error(`mesh-control-plane exited with ${exitCode} before serving:\n${output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`mesh-control-plane did not log "Serving" within ${timeoutMs} ms:\n${output()}`);
}

/** A response, fully read. */
export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any; // tests index freely into arbitrary responses
}

/** Keep-alive agents for `httpRequest` (TLS handshakes would dominate tests that make many requests). */
const keepAlive = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/** Headers for a request: the admin token by default; a `null` value removes a header. */
function requestOptions(
  config: ClientConfig,
  method: string,
  path: string,
  headers: Record<string, string | null>,
  reuse = false,
): RequestOptions & { ca?: string } {
  const u = new URL(path, config.server);
  const h: Record<string, string> = config.token ? { authorization: `Bearer ${config.token}` } : {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === null) delete h[k.toLowerCase()];
    else h[k.toLowerCase()] = v;
  }
  return {
    method,
    hostname: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port,
    path: u.pathname + u.search,
    headers: h,
    agent: reuse ? (u.protocol === 'https:' ? keepAlive.https : keepAlive.http) : false,
    ...(config.caData ? { ca: config.caData } : {}),
  };
}

function send(config: ClientConfig, opts: RequestOptions, body: Buffer | undefined): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (config.server.startsWith('https:') ? httpsReq : httpReq)(opts, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

function encodeBody(body: unknown, headers: Record<string, string | null>): Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body);
  if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';
  return Buffer.from(JSON.stringify(body));
}

/** One raw HTTP(S) request against `config.server` over a kept-alive connection (objects are sent as JSON; strings and Buffers as they are). */
export async function httpRequest(
  config: ClientConfig,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string | null> = {},
): Promise<HttpResult> {
  const h = { ...headers };
  const buf = encodeBody(body, h);
  if (
    buf &&
    !Object.keys(h).some((k) => k.toLowerCase() === 'content-length' || k.toLowerCase() === 'transfer-encoding')
  ) {
    h['content-length'] = String(buf.length);
  }
  const res = await send(config, requestOptions(config, method, path, h, true), buf);
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode ?? 0, headers: res.headers, text, json };
}

/** An open streaming response (a watch), read line by line. */
export interface EventStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** The next non-blank line parsed as JSON; undefined once the stream ended; rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<any>;
  /** Everything received so far, heartbeat newlines included. */
  raw(): string;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens a streaming GET (e.g. `?watch=1`) with the admin token. */
export async function openStream(
  config: ClientConfig,
  path: string,
  headers: Record<string, string | null> = {},
): Promise<EventStream> {
  const res = await send(config, requestOptions(config, 'GET', path, headers), undefined);
  let raw = '';
  let pending = '';
  const lines: unknown[] = [];
  let waiter: (() => void) | undefined;
  let done = false;
  res.setEncoding('utf8');
  res.on('data', (d: string) => {
    raw += d;
    pending += d;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line) lines.push(JSON.parse(line));
    }
    waiter?.();
  });
  const ended = new Promise<void>((resolve) => {
    const finish = (): void => {
      done = true;
      waiter?.();
      resolve();
    };
    res.once('end', finish);
    res.once('close', finish);
    res.once('error', finish);
  });
  const next = async (timeoutMs = 5000): Promise<unknown> => {
    const deadline = Date.now() + timeoutMs;
    while (!lines.length && !done) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no watch event within ${timeoutMs} ms; received so far: ${raw.slice(-500)}`);
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((r) => {
        waiter = r;
        timer = setTimeout(r, left);
      });
      clearTimeout(timer);
      waiter = undefined;
    }
    return lines.shift();
  };
  return { status: res.statusCode ?? 0, headers: res.headers, next, raw: () => raw, ended, close: () => res.destroy() };
}

/** Collects a child's stdout and stderr as text, as they arrive (read them with the returned getters). */
export function captureOutput(child: { stdout: NodeJS.ReadableStream | null; stderr: NodeJS.ReadableStream | null }): {
  stdout(): string;
  stderr(): string;
} {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return { stdout: () => stdout, stderr: () => stderr };
}
