/**
 * What the status page's session cookie grants: the admin's READS of the API (get, list and watch of
 * resources and events, discovery) — nothing else. A request with a bearer token is judged by the token alone;
 * a write, a certificate's material, a backup archive, service logs and the metrics never accept the cookie,
 * so a cross-site request can change nothing and the cookie cannot read a secret.
 */
import type { IncomingMessage } from 'node:http';
import type { Authenticator } from '../access/auth.ts';
import { matchRoute } from '../http/routes.ts';
import { sessionCookie, type UiSessions } from './ui-session.ts';

/** The cookie authenticator: the admin identity for a cookie-carrying read, else undefined. */
export function cookieReads(sessions: UiSessions): Authenticator {
  return (req) => {
    if (req.headers.authorization !== undefined) return undefined;
    if (!isRead(req)) return undefined;
    return sessions.valid(sessionCookie(req.headers.cookie)) ? { kind: 'admin' } : undefined;
  };
}

/** A GET or HEAD of a resource (not a subresource other than status), of the events view, or of discovery. */
function isRead(req: IncomingMessage): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const route = matchRoute(new URL(req.url ?? '/', 'http://server').pathname);
  if (route?.type === 'resource') return route.subresource === undefined || route.subresource === 'status';
  return route?.type === 'core-events' || route?.type === 'discovery';
}
