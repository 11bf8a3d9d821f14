/**
 * The API server as a request handler, separate from listen(): routing, authentication and authorization,
 * then discovery, health, the join endpoints or the resource handlers. Every failure is answered with a `Status`; nothing a
 * request does can throw out of the handler.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../meta/api-error.ts';
import { kindByPlural } from '../v1alpha1/kinds.ts';
import type { Store } from '../store/types.ts';
import type { Authenticator, Authorizer, Identity } from './access/auth.ts';
import { adminOnly, clientKey, unauthorized } from './access/auth.ts';
import { SharedLists, type SharedListStats } from './resources/shared-lists.ts';
import { ListPages, type ListPagesOptions } from './resources/list-pages.ts';
import { DEFAULT_MAX_BODY_BYTES } from './http/body.ts';
import { InflightLimiter, type Exemption, type InflightLimits, type InflightStats } from './http/inflight.ts';
import { valueSink } from './in-process-values.ts';
import { ApiServerMetrics } from './http/metrics.ts';
import { PROMETHEUS_CONTENT_TYPE } from '../meta/prometheus-text.ts';
import { discoveryDocument } from './http/discovery.ts';
import { LogFiles } from './logs/log-files.ts';
import { serveLogs } from './logs/logs.ts';
import type { JoinEndpoints } from './access/mesh-access.ts';
import type { Logger } from '../../api/meta/logger.ts';
import { silentLogger } from '../../api/meta/logger.ts';
import { serveResource } from './resources/resource-router.ts';
import { checkDotSegments, matchRoute, notFoundPath, type Route } from './http/routes.ts';
import { requireMethod, sendError, sendJson, sendRaw, sendText, toApiError } from './http/respond.ts';
import { openApiDocument } from './http/openapi.ts';
import { serveCoreEvents } from './resources/core-events.ts';
import { DEFAULT_WATCH_HEARTBEAT_MS, serveWatch, WatchRegistry } from './resources/watch.ts';
import { serveCertificateEndpoint, type CertificateEndpoints } from './certs/certificate-endpoints.ts';
import { isBackupEndpoint, serveBackupEndpoint } from './backup/backup-endpoints.ts';
import type { BackupService } from './backup/backup-service.ts';
import { isUiPath, type UiEndpoints } from './ui/ui-endpoints.ts';

/** Options of `createApp`. */
export interface AppOptions {
  store: Store;
  /** Maps a request to who is calling (undefined → 401). */
  authenticate: Authenticator;
  /** Decides what an identity may do (default: the admin may do everything, nobody else anything). */
  authorize?: Authorizer;
  /** The store view a request of `identity` works on (NodeRestriction for nodes; default the store itself). */
  storeFor?: (identity: Identity, store: Store) => Store;
  /**
   * Called with the node's name for every request a node's credential authenticated, before it is admitted or
   * authorized: it renews the node's lease (access/node-leases.ts `contact`).
   */
  onNodeRequest?: (node: string) => void;
  /** `/cluster-info`, `/join` and JoinToken creation (access/mesh-access.ts); absent: not served. */
  join?: JoinEndpoints;
  /** Where nodes' service logs are kept (the control plane's `DIR/logs`); absent: `nodes/<node>/logs` is a 404. */
  logsDir?: string;
  /** A Certificate's material and pending ACME challenges (certs/); absent: those endpoints answer 404. */
  certificates?: CertificateEndpoints;
  /** More Prometheus text `GET /metrics` appends to the server's own (the controllers' gauges). */
  metrics?: () => string;
  /** Taking and pulling backups (backup/backup-endpoints.ts); absent: `POST backups` is the plain resource API. */
  backups?: BackupService;
  /** The status page under `/ui/` and its session cookie's reads (ui/ui-endpoints.ts); absent: not served. */
  ui?: UiEndpoints;
  /** Request body limit in bytes (default 3 MiB); larger bodies get 413. */
  maxBodyBytes?: number;
  /** Interval of watch heartbeats and bookmarks in ms (default 15 000). */
  watchHeartbeatMs?: number;
  /** Bounds on concurrent requests and watches, answered 429 (defaults: http/inflight.ts). */
  inflight?: Partial<InflightLimits>;
  /** Bound on the bytes of the lists being sent, beyond which a new list is a 429 (default: resources/shared-lists.ts). */
  maxListBytes?: number;
  /** TTL, count bound and clock of the snapshots of paged lists (default: resources/list-pages.ts). */
  listPages?: ListPagesOptions;
  logger?: Logger;
}

/** The server as a request handler. */
export interface App {
  /** Serves one request; never throws. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Ends every open watch and closes the log files it keeps open (call before closing the listener). */
  close(): void;
  /** How many watches are open (for logs and tests). */
  openWatches(): number;
  /** How many requests it was handed so far, over any listener or in process (http/loop-batching.ts). */
  requests(): number;
  /** Requests in flight and refused with 429, lists serialized and shared (for logs, benchmarks and tests). */
  stats(): InflightStats & SharedListStats;
}

/** Builds the API server's request handler over a store. */
export function createApp(opts: AppOptions): App {
  const cfg = {
    store: opts.store,
    authenticate: withSession(opts.authenticate, opts.ui),
    authorize: opts.authorize ?? adminOnly,
    maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    heartbeatMs: opts.watchHeartbeatMs ?? DEFAULT_WATCH_HEARTBEAT_MS,
    logger: opts.logger ?? silentLogger,
    watches: new WatchRegistry(),
    limiter: new InflightLimiter({ limits: opts.inflight ?? {} }),
    lists: new SharedLists(opts.maxListBytes !== undefined ? { maxBytes: opts.maxListBytes } : {}),
    pages: new ListPages(opts.listPages ?? {}),
    metrics: new ApiServerMetrics(),
    storeFor: opts.storeFor,
    onNodeRequest: opts.onNodeRequest,
    join: opts.join,
    backups: opts.backups,
    logs: opts.logsDir ? new LogFiles({ dir: opts.logsDir }) : undefined,
    certificates: opts.certificates,
    ui: opts.ui,
    extraMetrics: opts.metrics,
  };
  // Per request, nothing is built for the error path until it is taken (a heartbeat a second per node).
  const fail = (req: IncomingMessage, res: ServerResponse, e: unknown): void => {
    const where = { method: req.method, path: req.url?.split('?')[0]?.slice(0, 200) };
    const err = toApiError(e, cfg.logger, where);
    cfg.metrics.counted(err);
    sendError(res, err, cfg.logger, where);
  };
  let handed = 0;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    handed++;
    try {
      const done = dispatch(cfg, req, res);
      if (done) done.catch((e: unknown) => fail(req, res, e));
    } catch (e) {
      fail(req, res, e);
    }
  };
  return {
    handle,
    close: () => {
      cfg.watches.closeAll();
      cfg.logs?.close();
    },
    openWatches: () => cfg.watches.size,
    requests: () => handed,
    stats: () => ({ ...cfg.limiter.stats(), ...cfg.lists.stats() }),
  };
}

/** The configuration the dispatcher and resource router share. */
export type AppConfig = Required<
  Omit<
    AppOptions,
    | 'watchHeartbeatMs'
    | 'storeFor'
    | 'onNodeRequest'
    | 'join'
    | 'logsDir'
    | 'inflight'
    | 'maxListBytes'
    | 'listPages'
    | 'certificates'
    | 'metrics'
    | 'backups'
    | 'ui'
  >
> &
  Pick<AppOptions, 'storeFor' | 'onNodeRequest' | 'join' | 'certificates' | 'backups' | 'ui'> & {
    /** More exposition text `/metrics` appends (the controllers' gauges). */
    extraMetrics?: () => string;
    heartbeatMs: number;
    watches: WatchRegistry;
    limiter: InflightLimiter;
    lists: SharedLists;
    pages: ListPages;
    metrics: ApiServerMetrics;
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
    const join = cfg.join;
    return whenAdmitted(cfg.limiter.admit(res, 'anonymous', false), () =>
      serveJoin(join, route.endpoint, req, res, method),
    );
  }
  if (cfg.ui && isUiPath(url.pathname)) {
    const ui = cfg.ui;
    return whenAdmitted(cfg.limiter.admit(res, 'anonymous', false), () => ui.serve(req, res, url));
  }
  const identity = cfg.authenticate(req);
  if (!identity) throw unauthorized();
  if (identity.kind === 'node') cfg.onNodeRequest?.(identity.name);
  const held = longRunning(route, url);
  cfg.metrics.request(identity.kind, method, routeLabel(route, held));
  if (route?.type === 'metrics') return serveMetrics(cfg, identity, res, method, url);
  const admitted = cfg.limiter.admit(res, clientKey(identity), held, exemption(identity, res));
  return whenAdmitted(admitted, () => serveAdmitted(cfg, { req, res, url, method }, identity, route));
}

/**
 * What the in-flight bounds leave alone (http/inflight.ts): the admin's requests are not counted in the total; those
 * of the control plane's own controllers (the admin's, made in this process: the response takes values) are not
 * refused by the admin's per-client bound either. Their workers bound them (128 Declaration workers alone), and a
 * 429 would only idle a worker for the `Retry-After` second in the middle of a change to every node.
 */
function exemption(identity: Identity, res: ServerResponse): Exemption {
  if (identity.kind !== 'admin') return false;
  return valueSink(res) ? 'all' : 'total';
}

/** Runs `serve` at once, or once the in-flight limiter took a slot for the request (`admitted`). */
function whenAdmitted(
  admitted: Promise<void> | undefined,
  serve: () => Promise<void> | undefined,
): Promise<void> | undefined {
  return admitted ? admitted.then(serve) : serve();
}

/** Serves an authenticated request that holds its in-flight slot. */
function serveAdmitted(
  cfg: AppConfig,
  { req, res, url, method }: Call,
  identity: Identity,
  route: Exclude<Route, { type: 'health' | 'metrics' }> | undefined,
): Promise<void> | undefined {
  if (!route || route.type === 'join') throw notFoundPath();
  if (route.type === 'logs') return serveLogs(cfg, { req, res, url, method, identity, node: route.node });
  if (route.type === 'certificate') {
    const { store, authorize } = cfg;
    serveCertificateEndpoint(cfg.certificates, { res, method, path: url.pathname, identity, route, store, authorize });
    return undefined;
  }
  if (route.type === 'openapi' || route.type === 'discovery') {
    serveDocument(cfg, identity, { req, res, url, method }, route);
    return undefined;
  }
  if (route.type === 'core-events') {
    coreEvents(cfg, identity, { req, res, url, method }, route);
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
  if (cfg.backups && isBackupEndpoint(route, method, url)) {
    const call = { req, res, url, method, identity, route, store: cfg.store, maxBodyBytes: cfg.maxBodyBytes };
    return serveBackupEndpoint(cfg.backups, call);
  }
  return serveResource(forRequest(cfg, identity, url), { req, res, url, method, identity, route });
}

/** What a request addresses, for the request counter: `<plural>[/<subresource>]`, `<plural>/watch` or the route type. */
function routeLabel(route: Route | undefined, held: boolean): string {
  if (!route) return 'unknown';
  if (route.type !== 'resource') return route.type;
  if (!kindByPlural(route.plural) || (route.subresource !== undefined && route.subresource !== 'status'))
    return 'unknown';
  if (held) return `${route.plural}/watch`;
  return route.subresource ? `${route.plural}/${route.subresource}` : route.plural;
}

/** One request's parts, as the dispatcher's helpers take them. */
interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  method: string;
}

/** Serves a discovery or OpenAPI document (GET or HEAD, authorized as a non-resource path). */
function serveDocument(
  cfg: AppConfig,
  identity: Identity,
  c: Call,
  route: Extract<Route, { type: 'openapi' | 'discovery' }>,
): void {
  requireMethod(c.res, c.method, ['GET', 'HEAD']);
  const refused = cfg.authorize(identity, { verb: 'get', path: c.url.pathname });
  if (refused) throw refused;
  if (route.type === 'discovery') {
    sendJson(c.res, 200, discoveryDocument(route.doc));
    return;
  }
  const doc = openApiDocument(route.doc, c.req.headers.accept);
  sendRaw(c.res, 200, doc.text, { ETag: doc.etag });
}

/** Serves the core/v1 events view (resources/core-events.ts), authorized as `events`. */
function coreEvents(cfg: AppConfig, identity: Identity, c: Call, route: Extract<Route, { type: 'core-events' }>): void {
  const verb = longRunning(route, c.url) ? 'watch' : route.name === undefined ? 'list' : 'get';
  const refused = cfg.authorize(identity, { verb, plural: 'events', path: c.url.pathname });
  if (refused) throw refused;
  serveCoreEvents({
    ...c,
    store: forRequest(cfg, identity, c.url).store,
    route,
    watch: (r, rep, view) => serveWatch(r, rep, { registry: cfg.watches, heartbeatMs: cfg.heartbeatMs, view }),
    request: {
      logger: cfg.logger,
      maxBodyBytes: cfg.maxBodyBytes,
      lists: cfg.lists,
      pages: cfg.pages,
      client: clientKey(identity),
    },
  });
}

/** Watches and followed logs: held open, so bounded per client rather than by the in-flight cap. */
function longRunning(route: Route | undefined, url: URL): boolean {
  if (route?.type === 'logs') return flag(url, 'follow');
  if (route?.type === 'core-events') return route.watchPath || flag(url, 'watch');
  if (route?.type !== 'resource') return false;
  return route.watchPath || (route.name === undefined && flag(url, 'watch'));
}

/** Whether query parameter `name` is `true` or `1`. */
function flag(url: URL, name: string): boolean {
  const v = url.search === '' ? null : url.searchParams.get(name);
  return v === 'true' || v === '1';
}

/** `GET /metrics`, for the admin only; before the in-flight bound, so that it can be read during a storm. */
function serveMetrics(cfg: AppConfig, identity: Identity, res: ServerResponse, method: string, url: URL): undefined {
  requireMethod(res, method, ['GET', 'HEAD']);
  const refused = adminOnly(identity, { verb: 'get', path: url.pathname });
  if (refused) throw refused;
  const text = cfg.metrics.render(cfg.limiter.stats()) + (cfg.extraMetrics?.() ?? '');
  res.writeHead(200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
  return undefined;
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

/** The bearer authenticator, then (when the page is served) the session cookie's reads. */
function withSession(bearer: Authenticator, ui: UiEndpoints | undefined): Authenticator {
  return ui ? (req) => bearer(req) ?? ui.authenticate(req) : bearer;
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
