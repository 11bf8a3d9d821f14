/**
 * The API server as a request handler, separate from listen(): routing, authentication and authorization,
 * then discovery, health, the join endpoints or the resource handlers. Every failure is answered with a `Status`; nothing a
 * request does can throw out of the handler.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../meta/api-error.ts';
import type { Store } from '../store/types.ts';
import type { Authenticator, Authorizer, Identity } from './access/auth.ts';
import { adminOnly, clientKey, forbidden, unauthorized } from './access/auth.ts';
import { SharedLists, type SharedListStats } from './resources/shared-lists.ts';
import { DEFAULT_MAX_BODY_BYTES } from './http/body.ts';
import { InflightLimiter, type InflightLimits, type InflightStats } from './http/inflight.ts';
import { discoveryDocument } from './http/discovery.ts';
import { LogFiles } from './logs/log-files.ts';
import { serveLogs } from './logs/logs.ts';
import type { JoinEndpoints } from './access/mesh-access.ts';
import type { Logger } from '../../api/meta/logger.ts';
import { silentLogger } from '../../api/meta/logger.ts';
import { serveResource } from './resources/resource-router.ts';
import { checkDotSegments, matchRoute, notFoundPath, type Route } from './http/routes.ts';
import { requireMethod, sendError, sendJson, sendText } from './http/respond.ts';
import { WatchRegistry } from './resources/watch.ts';
import { serveCertificateEndpoint, type CertificateEndpoints } from './certs/certificate-endpoints.ts';

/** Options of `createApp`. */
export interface AppOptions {
  store: Store;
  /** Maps a request to who is calling (undefined → 401). */
  authenticate: Authenticator;
  /** Decides what an identity may do (default: the admin may do everything, nobody else anything). */
  authorize?: Authorizer;
  /** The store view a request of `identity` works on (NodeRestriction for nodes; default the store itself). */
  storeFor?: (identity: Identity, store: Store) => Store;
  /** `/cluster-info`, `/join` and JoinToken creation (access/mesh-access.ts); absent: not served. */
  join?: JoinEndpoints;
  /** Where nodes' service logs are kept (the control plane's `DIR/logs`); absent: `nodes/<node>/logs` is a 404. */
  logsDir?: string;
  /** A Certificate's material and pending ACME challenges (certs/); absent: those endpoints answer 404. */
  certificates?: CertificateEndpoints;
  /** The Prometheus text `GET /metrics` serves to the admin; absent: 404. */
  metrics?: () => string;
  /** Request body limit in bytes (default 3 MiB); larger bodies get 413. */
  maxBodyBytes?: number;
  /** Interval of watch heartbeats and bookmarks in ms (default 15 000). */
  watchHeartbeatMs?: number;
  /** Bounds on concurrent requests and watches, answered 429 (defaults: http/inflight.ts). */
  inflight?: Partial<InflightLimits>;
  logger?: Logger;
}

/** The server as a request handler. */
export interface App {
  /** Serves one request; never throws. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Ends every open watch (call before closing the listener so that it can finish). */
  close(): void;
  /** How many watches are open (for logs and tests). */
  openWatches(): number;
  /** Requests in flight and refused with 429, lists serialized and shared (for logs, benchmarks and tests). */
  stats(): InflightStats & SharedListStats;
}

/** Builds the API server's request handler over a store. */
export function createApp(opts: AppOptions): App {
  const cfg = {
    store: opts.store,
    authenticate: opts.authenticate,
    authorize: opts.authorize ?? adminOnly,
    maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    heartbeatMs: opts.watchHeartbeatMs ?? 15_000,
    logger: opts.logger ?? silentLogger,
    watches: new WatchRegistry(),
    limiter: new InflightLimiter({ limits: opts.inflight ?? {} }),
    lists: new SharedLists(),
    storeFor: opts.storeFor,
    join: opts.join,
    logs: opts.logsDir ? new LogFiles({ dir: opts.logsDir }) : undefined,
    certificates: opts.certificates,
    metrics: opts.metrics,
  };
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const where = { method: req.method, path: req.url?.split('?')[0]?.slice(0, 200) };
    try {
      const done = dispatch(cfg, req, res);
      if (done) done.catch((e: unknown) => sendError(res, e, cfg.logger, where));
    } catch (e) {
      sendError(res, e, cfg.logger, where);
    }
  };
  return {
    handle,
    close: () => cfg.watches.closeAll(),
    openWatches: () => cfg.watches.size,
    stats: () => ({ ...cfg.limiter.stats(), ...cfg.lists.stats() }),
  };
}

/** The configuration the dispatcher and resource router share. */
export type AppConfig = Required<
  Omit<AppOptions, 'watchHeartbeatMs' | 'storeFor' | 'join' | 'logsDir' | 'inflight' | 'certificates' | 'metrics'>
> &
  Pick<AppOptions, 'storeFor' | 'join' | 'certificates' | 'metrics'> & {
    heartbeatMs: number;
    watches: WatchRegistry;
    limiter: InflightLimiter;
    lists: SharedLists;
    logs?: LogFiles;
  };

function dispatch(cfg: AppConfig, req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
  const url = parseUrl(req.url);
  const route = matchRoute(url.pathname);
  const method = req.method ?? 'GET';
  if (route?.type === 'health') {
    requireMethod(res, method, ['GET', 'HEAD']);
    sendText(res, 200, 'ok');
    return undefined;
  }
  if (route?.type === 'join' && cfg.join) {
    cfg.limiter.admit(res, 'anonymous', false);
    return serveJoin(cfg.join, route.endpoint, req, res, method);
  }
  const identity = cfg.authenticate(req);
  if (!identity) throw unauthorized();
  cfg.limiter.admit(res, clientKey(identity), longRunning(route, url));
  if (!route || route.type === 'join') throw notFoundPath();
  if (route.type === 'logs') return serveLogs(cfg, { req, res, url, method, identity, node: route.node });
  if (route.type === 'certificate') {
    const { store, authorize } = cfg;
    serveCertificateEndpoint(cfg.certificates, { res, method, path: url.pathname, identity, route, store, authorize });
    return undefined;
  }
  if (route.type === 'metrics') return serveMetrics(cfg, res, method, identity, url.pathname);
  if (route.type === 'discovery') {
    requireMethod(res, method, ['GET', 'HEAD']);
    const refused = cfg.authorize(identity, { verb: 'get', path: url.pathname });
    if (refused) throw refused;
    sendJson(res, 200, discoveryDocument(route.doc));
    return undefined;
  }
  if (cfg.join && route.plural === 'jointokens' && route.name === undefined && !route.watchPath && method === 'POST') {
    const refused = cfg.authorize(identity, { verb: 'create', plural: 'jointokens', path: url.pathname });
    if (refused) throw refused;
    return cfg.join.createToken({
      req,
      res,
      query: url.searchParams,
      store: cfg.store,
      maxBodyBytes: cfg.maxBodyBytes,
      logger: cfg.logger,
    });
  }
  return serveResource(forRequest(cfg, identity, url), { req, res, url, method, identity, route });
}

/** `GET /metrics` for the admin (Prometheus text); a node gets 403, a server without metrics 404. */
function serveMetrics(
  cfg: AppConfig,
  res: ServerResponse,
  method: string,
  identity: Identity,
  path: string,
): undefined {
  requireMethod(res, method, ['GET']);
  if (identity.kind !== 'admin') throw forbidden(identity, { verb: 'get', path }, 'only the admin may read metrics');
  if (!cfg.metrics) throw notFoundPath();
  const text = cfg.metrics();
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text);
  return undefined;
}

/** Watches and followed logs: held open, so bounded per client rather than by the in-flight cap. */
function longRunning(route: Route | undefined, url: URL): boolean {
  const flag = (name: string): boolean => ['true', '1'].includes(url.searchParams.get(name) ?? '');
  if (route?.type === 'logs') return flag('follow');
  if (route?.type !== 'resource') return false;
  return route.watchPath || (route.name === undefined && flag('watch'));
}

/** Serves the anonymous join endpoints: `GET /cluster-info`, `POST /join`. */
function serveJoin(
  join: JoinEndpoints,
  endpoint: 'cluster-info' | 'join',
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
): Promise<void> | undefined {
  requireMethod(res, method, endpoint === 'join' ? ['POST'] : ['GET']);
  if (endpoint === 'join') return join.join(req, res);
  join.clusterInfo(req, res);
  return undefined;
}

/** The config of one resource request: the identity's store view; the authorizer also sees the field selector. */
function forRequest(cfg: AppConfig, identity: Identity, url: URL): AppConfig {
  const fieldSelector = url.searchParams.get('fieldSelector') || undefined;
  return {
    ...cfg,
    store: cfg.storeFor ? cfg.storeFor(identity, cfg.store) : cfg.store,
    authorize: fieldSelector ? (id, attrs) => cfg.authorize(id, { ...attrs, fieldSelector }) : cfg.authorize,
  };
}

/** Parses the request target; only origin-form (`/path?query`) is accepted. */
function parseUrl(target: string | undefined): URL {
  if (!target?.startsWith('/')) throw ApiError.badRequest('the request target must be a path');
  checkDotSegments(target);
  try {
    return new URL(`http://server${target}`);
  } catch {
    throw ApiError.badRequest('malformed request target');
  }
}
