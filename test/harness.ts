/**
 * The shared test harness: the real API server over a real store in a temp dir, in-process on port 0
 * (`startServer`, here), or the real `mesh-control-plane` process (`spawnControlPlane`,
 * control-plane-process.ts); plus a raw HTTP(S) request helper and a watch-stream reader that depend on
 * nothing but Node (http-request.ts). Tests import all of it from here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientConfig } from '../api/client/types.ts';
import { loadMeshconfig } from '../api/client/meshconfig.ts';
import { createApp, type App } from '../api/server/app.ts';
import type { InflightLimits } from '../api/server/http/inflight.ts';
import type { ListPagesOptions } from '../api/server/resources/list-pages.ts';
import { bearerAuthenticator, hashToken, type Authorizer, type Identity } from '../api/server/access/auth.ts';
import { controlPlanePaths, ensureControlPlaneFiles, writeAdminMeshconfig } from '../api/server/pki/first-start.ts';
import { listen } from '../api/server/listen.ts';
import { meshAccess } from '../api/server/access/mesh-access.ts';
import type { NodeLeases } from '../api/server/access/node-leases.ts';
import { createUiEndpoints, type UiEndpoints } from '../api/server/ui/ui-endpoints.ts';
import { loadSessionKey } from '../api/server/ui/ui-session.ts';
import type { JoinRate } from '../api/server/access/join-handler.ts';
import type { EventLimits } from '../api/server/access/event-quota.ts';
import { realClock, type Clock } from '../api/meta/clock.ts';
import { silentLogger, type Logger } from '../api/meta/logger.ts';
import { createBackupService, type BackupService } from '../api/server/backup/backup-service.ts';
import { openStore, type FileStore, type OpenStoreOptions } from '../api/store/index.ts';
import type { CertAndKey } from '../api/server/pki/pki.ts';
import { AcmeChallenges } from '../api/server/certs/acme-challenges.ts';
import type { CertificateEndpoints } from '../api/server/certs/certificate-endpoints.ts';
import { CertificateVault } from '../api/server/certs/vault.ts';
import { httpRequest, type HttpResult } from './http-request.ts';

export { REPO_ROOT } from './repo-root.ts';
export {
  spawnControlPlane,
  captureOutput,
  type SpawnOptions,
  type ControlPlaneProcess,
} from './control-plane-process.ts';
export { httpRequest, openStream, type HttpResult, type EventStream } from './http-request.ts';

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
  /** Serve the status page under `/ui/` (api/server/ui/), with `clock` when given. */
  ui?: boolean;
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
  /** The nodes' heartbeat leases, when started with `meshAccess`. */
  leases?: NodeLeases;
  /** A request with the admin token (unless `headers.authorization` is given; `null` sends none). */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string | null>): Promise<HttpResult>;
  /** Closes server and store; removes the data dir unless it was passed in. */
  stop(): Promise<void>;
}

/** The status page's endpoints over the data dir's session key, as the control plane builds them. */
function uiEndpoints(dataDir: string, adminTokenSha256: string, opts: StartServerOptions): UiEndpoints {
  return createUiEndpoints({
    key: loadSessionKey(dataDir),
    adminTokenSha256: () => adminTokenSha256,
    clock: opts.clock ?? realClock,
    logger: opts.logger ?? silentLogger,
  });
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
    ...(opts.ui ? { ui: uiEndpoints(dataDir, files.adminTokenSha256, opts) } : {}),
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
    ...(access ? { leases: access.leases } : {}),
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
