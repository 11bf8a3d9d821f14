/**
 * Maps a request path to what it addresses: a health check, the admin's `/metrics`, a discovery document, the anonymous join
 * endpoints (`/cluster-info`, `/join`), or a resource
 * (`/apis/meshctl.dev/v1alpha1/<plural>[/<name>[/status]]`, and the older `/watch/<plural>[/<name>]` form);
 * a node's service logs (`/apis/meshctl.dev/v1alpha1/nodes/<name>/logs`, logs/logs.ts); a Certificate's material
 * and pending ACME challenges (`…/certificates/<name>/material`, `…/certificates/<name>/acme-challenge/<token>`,
 * certs/certificate-endpoints.ts).
 */
import { ApiError } from '../../meta/api-error.ts';
import { GROUP, VERSION } from '../../meta/types.ts';

/** A discovery document. */
export type DiscoveryDoc = 'version' | 'api' | 'apis' | 'group' | 'resources';

/** What a path addresses. */
export type Route =
  | { type: 'health' }
  | { type: 'metrics' }
  | { type: 'discovery'; doc: DiscoveryDoc }
  | { type: 'join'; endpoint: 'cluster-info' | 'join' }
  | { type: 'logs'; node: string }
  | { type: 'certificate'; name: string; endpoint: 'material' | 'acme-challenge'; token?: string }
  | { type: 'resource'; plural: string; name?: string; subresource?: string; watchPath: boolean };

const HEALTH = new Set(['/healthz', '/readyz', '/livez']);
const DISCOVERY: Record<string, DiscoveryDoc> = {
  '/version': 'version',
  '/api': 'api',
  '/apis': 'apis',
  [`/apis/${GROUP}`]: 'group',
  [`/apis/${GROUP}/${VERSION}`]: 'resources',
};
const PREFIX = `/apis/${GROUP}/${VERSION}/`;

/** The 404 for a path that addresses nothing. */
export function notFoundPath(): ApiError {
  return new ApiError({ reason: 'NotFound', message: 'the server could not find the requested resource', details: {} });
}

/** Resolves a URL path; undefined when it addresses nothing we serve (404). */
export function matchRoute(pathname: string): Route | undefined {
  const path = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
  if (HEALTH.has(path) || /^\/(healthz|readyz|livez)\/[\w-]+$/.test(path)) return { type: 'health' };
  if (path === '/metrics') return { type: 'metrics' };
  if (path === '/cluster-info' || path === '/join')
    return { type: 'join', endpoint: path === '/join' ? 'join' : 'cluster-info' };
  const doc = DISCOVERY[path];
  if (doc) return { type: 'discovery', doc };
  if (!path.startsWith(PREFIX)) return undefined;
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
 * Refuses a request path with a `.` or `..` segment, plain or percent-encoded: URL parsing would resolve it
 * (`…/modules/%2e%2e` is `…/v1alpha1`, the discovery document) and the request would reach what it did not name.
 */
export function checkDotSegments(path: string): void {
  for (const s of path.split('?')[0].split('/')) {
    if (/^(\.|%2e){1,2}$/i.test(s)) throw ApiError.badRequest('the request path must not contain "." or ".." segments');
  }
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw ApiError.badRequest(`malformed path segment "${s.slice(0, 100)}"`);
  }
}
