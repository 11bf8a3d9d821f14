/**
 * Maps a request path to what it addresses: a health check, the metrics, a discovery document, the anonymous join
 * endpoints (`/cluster-info`, `/join`), or a resource
 * (`/apis/meshctl.dev/v1alpha1/<plural>[/<name>[/status]]`, and the older `/watch/<plural>[/<name>]` form);
 * a node's service logs (`/apis/meshctl.dev/v1alpha1/nodes/<name>/logs`, logs/logs.ts); a Certificate's material
 * and pending ACME challenges (`…/certificates/<name>/material`, `…/certificates/<name>/acme-challenge/<token>`,
 * certs/certificate-endpoints.ts); the OpenAPI documents (openapi.ts); the core/v1 view of Events that
 * `kubectl describe` reads (`/api/v1/…events`).
 */
import { ApiError } from '../../meta/api-error.ts';
import { GROUP, VERSION } from '../../meta/types.ts';
import { V3_GROUP_URL, type OpenApiDoc } from './openapi.ts';
import { V3_CORE_URL } from './openapi-core.ts';

/** A discovery document. */
export type DiscoveryDoc = 'version' | 'api' | 'apis' | 'group' | 'resources' | 'core';

/** What a path addresses. */
export type Route =
  | { type: 'health' }
  | { type: 'metrics' }
  | { type: 'discovery'; doc: DiscoveryDoc }
  | { type: 'join'; endpoint: 'cluster-info' | 'join' }
  | { type: 'logs'; node: string }
  | { type: 'certificate'; name: string; endpoint: 'material' | 'acme-challenge'; token?: string }
  | { type: 'openapi'; doc: OpenApiDoc }
  | { type: 'core-events'; namespace?: string; name?: string; watchPath: boolean }
  | { type: 'resource'; plural: string; name?: string; subresource?: string; watchPath: boolean };

const HEALTH = new Set(['/healthz', '/readyz', '/livez']);
const DISCOVERY = new Map<string, DiscoveryDoc>([
  ['/version', 'version'],
  ['/api', 'api'],
  ['/apis', 'apis'],
  [`/apis/${GROUP}`, 'group'],
  [`/apis/${GROUP}/${VERSION}`, 'resources'],
  ['/api/v1', 'core'],
]);
const OPENAPI = new Map<string, OpenApiDoc>([
  ['/openapi/v2', 'v2'],
  ['/openapi/v3', 'v3'],
  [V3_GROUP_URL, 'v3-group'],
  [V3_CORE_URL, 'v3-core'],
]);
const PREFIX = `/apis/${GROUP}/${VERSION}/`;

/** The 404 for a path that addresses nothing. */
export function notFoundPath(): ApiError {
  return new ApiError({ reason: 'NotFound', message: 'the server could not find the requested resource', details: {} });
}

/** Resolves a URL path; undefined when it addresses nothing we serve (404). */
export function matchRoute(pathname: string): Route | undefined {
  const path = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
  // Nearly every request: no other route's path starts so, so none is looked up.
  if (path.startsWith(PREFIX)) return resourceRoute(path);
  if (HEALTH.has(path) || /^\/(healthz|readyz|livez)\/[\w-]+$/.test(path)) return { type: 'health' };
  if (path === '/metrics') return { type: 'metrics' };
  if (path === '/cluster-info' || path === '/join')
    return { type: 'join', endpoint: path === '/join' ? 'join' : 'cluster-info' };
  const doc = DISCOVERY.get(path);
  if (doc) return { type: 'discovery', doc };
  const openapi = OPENAPI.get(path);
  if (openapi) return { type: 'openapi', doc: openapi };
  if (path.startsWith('/api/v1/')) return coreEventsRoute(path.slice('/api/v1/'.length).split('/').map(decodeSegment));
  return undefined;
}

/** A path under PREFIX: a resource, a node's logs or a Certificate's endpoints. */
function resourceRoute(path: string): Route | undefined {
  const parts = path.slice(PREFIX.length).split('/').map(decodeSegment);
  const watchPath = parts[0] === 'watch';
  if (watchPath) parts.shift();
  const [plural, name, subresource, ...rest] = parts;
  const cert = certificateRoute(plural, name, subresource, rest, watchPath);
  if (cert) return cert;
  if (!plural || rest.length || name === '' || subresource === '' || (watchPath && subresource !== undefined))
    return undefined;
  if (plural === 'nodes' && name !== undefined && subresource === 'logs' && !watchPath)
    return { type: 'logs', node: name };
  return {
    type: 'resource',
    plural,
    ...(name !== undefined ? { name } : {}),
    ...(subresource !== undefined ? { subresource } : {}),
    watchPath,
  };
}

/** `certificates/<name>/material` and `certificates/<name>/acme-challenge/<token>`, else undefined. */
function certificateRoute(
  plural: string | undefined,
  name: string | undefined,
  sub: string | undefined,
  rest: string[],
  watchPath: boolean,
): Route | undefined {
  if (plural !== 'certificates' || !name || watchPath) return undefined;
  if (sub === 'material' && rest.length === 0) return { type: 'certificate', name, endpoint: 'material' };
  const token = rest[0];
  if (sub === 'acme-challenge' && rest.length === 1 && token) {
    return { type: 'certificate', name, endpoint: 'acme-challenge', token };
  }
  return undefined;
}

/**
 * The read-only core/v1 view of our Events (resources/core-events.ts): `/api/v1/events[/<name>]`,
 * `/api/v1/namespaces/<ns>/events[/<name>]` and their `/api/v1/watch/…` forms; nothing else under `/api/v1`.
 */
function coreEventsRoute(parts: string[]): Route | undefined {
  const watchPath = parts[0] === 'watch';
  if (watchPath) parts.shift();
  let namespace: string | undefined;
  if (parts[0] === 'namespaces') {
    if (!parts[1]) return undefined;
    namespace = parts[1];
    parts = parts.slice(2);
  }
  const [plural, name, ...rest] = parts;
  if (plural !== 'events' || rest.length || name === '') return undefined;
  return {
    type: 'core-events',
    watchPath,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
  };
}

/**
 * Refuses a request path with a `.` or `..` segment, plain or percent-encoded: URL parsing would resolve it
 * (`…/modules/%2e%2e` is `…/v1alpha1`, the discovery document) and the request would reach what it did not name.
 */
export function checkDotSegments(path: string): void {
  // The usual request: no segment starts with a dot (the group's name holds dots, mid-segment) and nothing is escaped.
  if (!path.includes('/.') && !path.startsWith('.') && !path.includes('%')) return;
  for (const s of path.split('?')[0].split('/')) {
    if (/^(\.|%2e){1,2}$/i.test(s)) throw ApiError.badRequest('the request path must not contain "." or ".." segments');
  }
}

function decodeSegment(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    throw ApiError.badRequest(`malformed path segment "${s.slice(0, 100)}"`);
  }
}
