/**
 * Authentication and authorization of API requests. A request carries `Authorization: Bearer <token>`;
 * the authenticator maps it to an Identity (or nothing → 401); the authorizer decides whether that identity
 * may do what it asks (or 403). Tokens are compared by their SHA-256 only, in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../meta/api-error.ts';
import { GROUP } from '../../meta/types.ts';

/** Who is calling: the admin credential, or a node's own credential (issued when it joined). */
export type Identity = { kind: 'admin' } | { kind: 'node'; name: string };

/** The key of a client for per-client bounds and shared answers: `admin` or `node/<name>`. */
export function clientKey(identity: Identity): string {
  return identity.kind === 'admin' ? 'admin' : `node/${identity.name}`;
}

/** Maps a request to an Identity, or undefined when it carries no valid credential. */
export type Authenticator = (req: IncomingMessage) => Identity | undefined;

/** The verbs of the API, as Kubernetes RBAC names them. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** What a request wants to do: a resource verb (`plural` set) or a non-resource GET of `path`. */
export interface RequestAttributes {
  verb: Verb;
  plural?: string;
  name?: string;
  subresource?: string;
  path: string;
  /** The request's `fieldSelector` (list and watch), for rules that depend on it. */
  fieldSelector?: string;
  /** The node the addressed object belongs to (a Certificate's spec.node), for rules that depend on it. */
  objectNode?: string;
}

/** Returns an ApiError (403 Forbidden) when `identity` may not do `attrs`, undefined when it may. */
export type Authorizer = (identity: Identity, attrs: RequestAttributes) => ApiError | undefined;

/** The hex SHA-256 of a token: the only form in which tokens are stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Options of `bearerAuthenticator`. */
export interface BearerAuthenticatorOptions {
  /** Hex SHA-256 of the admin token (a function so that a rotated token takes effect at once). */
  adminTokenSha256: string | (() => string);
  /** Resolves other tokens by their hex SHA-256 (per-node credentials). */
  resolve?: (tokenSha256: string) => Identity | undefined;
  /** How a token is hashed (default hashToken; tests count the calls). */
  hash?: (token: string) => string;
}

/** A connection's last Authorization header and its token's SHA-256 (hex and bytes). */
interface HashedHeader {
  header: string;
  hex: string;
  bytes: Buffer;
}

/**
 * Builds the bearer-token authenticator: the admin token, then whatever `resolve` knows. A kept connection
 * (an agent's heartbeats) presents the same header on every request, so its token's hash is kept per socket
 * and computed again only when the header changes; what the hash maps to (the admin hash, `resolve`) is
 * looked up on every request, so a rotated or revoked credential is refused at once.
 */
export function bearerAuthenticator(opts: BearerAuthenticatorOptions): Authenticator {
  const hash = opts.hash ?? hashToken;
  const perSocket = new WeakMap<object, HashedHeader>();
  let admin: { hex: string; bytes: Buffer } | undefined;
  const adminBytes = (): Buffer => {
    const hex = typeof opts.adminTokenSha256 === 'function' ? opts.adminTokenSha256() : opts.adminTokenSha256;
    if (admin?.hex !== hex) admin = { hex, bytes: unpooledHexBytes(hex) };
    return admin.bytes;
  };
  return (req) => {
    const header = req.headers.authorization ?? '';
    const socket: object | null | undefined = req.socket;
    let hashed = socket ? perSocket.get(socket) : undefined;
    if (hashed?.header !== header) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m?.[1]) return undefined;
      const hex = hash(m[1]);
      hashed = { header, hex, bytes: unpooledHexBytes(hex) };
      if (socket) perSocket.set(socket, hashed);
    }
    const expected = adminBytes();
    if (expected.length === hashed.bytes.length && timingSafeEqual(expected, hashed.bytes)) return { kind: 'admin' };
    return opts.resolve?.(hashed.hex);
  };
}

/**
 * The bytes of a hex string in a Buffer of their own. `Buffer.from` would cut small ones out of Buffer's shared
 * 8 KiB pool, and a long-lived slice keeps its whole slab alive: kept per connection, ~14 MiB at 10,000 connections.
 */
export function unpooledHexBytes(hex: string): Buffer {
  const bytes = Buffer.alloc(hex.length >>> 1);
  bytes.write(hex, 'hex');
  return bytes;
}

/** The user name an identity has in messages (`admin`, `system:node:<name>`). */
export function userName(identity: Identity): string {
  return identity.kind === 'admin' ? 'admin' : `system:node:${identity.name}`;
}

/** The 403 for a refused request, worded like kube-apiserver's (with `why` appended when given). */
export function forbidden(identity: Identity, attrs: RequestAttributes, why?: string): ApiError {
  const user = userName(identity);
  const reason = why ? `: ${why}` : '';
  if (!attrs.plural) {
    return new ApiError({
      reason: 'Forbidden',
      message: `forbidden: User "${user}" cannot ${attrs.verb} path "${attrs.path}"${reason}`,
    });
  }
  const resource = attrs.subresource ? `${attrs.plural}/${attrs.subresource}` : attrs.plural;
  const subject = attrs.name ? `${attrs.plural}.${GROUP} "${attrs.name}"` : `${attrs.plural}.${GROUP}`;
  return new ApiError({
    reason: 'Forbidden',
    message: `${subject} is forbidden: User "${user}" cannot ${attrs.verb} resource "${resource}" in API group "${GROUP}" at the cluster scope${reason}`,
    details: { ...(attrs.name ? { name: attrs.name } : {}), group: GROUP, kind: attrs.plural },
  });
}

/** The policy of this issue: the admin may do everything; every other identity is refused. */
export const adminOnly: Authorizer = (identity, attrs) =>
  identity.kind === 'admin' ? undefined : forbidden(identity, attrs);

/** The 401 for a request without a valid credential. */
export function unauthorized(): ApiError {
  return new ApiError({ reason: 'Unauthorized', message: 'Unauthorized: a valid bearer token is required' });
}
