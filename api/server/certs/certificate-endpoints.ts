/**
 * A Certificate's two endpoints beside its resource, for the node that serves it (spec.node) and nobody else:
 *
 * - `GET …/certificates/<name>/material` → 200 `CertificateMaterial` (api/wire/certificate-material.ts): the
 *   chain, the private key, the CA and the validity; 404 while nothing is issued.
 * - `GET …/certificates/<name>/acme-challenge/<token>` → 200 text/plain: the key authorization of a pending
 *   HTTP-01 challenge, which the node answers the CA with; 404 when no such challenge is pending.
 *
 * Any other node gets 403 (access/node-authorizer.ts, given the Certificate's node), and so does the admin:
 * a private key is returned to its node only, never by any other response. An unknown Certificate is a 404.
 */
import type { ServerResponse } from 'node:http';
import { ApiError } from '../../meta/api-error.ts';
import type { Store } from '../../store/types.ts';
import type { CertificateMaterial } from '../../wire/certificate-material.ts';
import { forbidden, type Authorizer, type Identity, type RequestAttributes } from '../access/auth.ts';
import { requireMethod, sendJson } from '../http/respond.ts';
import type { Route } from '../http/routes.ts';
import type { AcmeChallenges } from './acme-challenges.ts';
import type { CertificateVault } from './vault.ts';

/** What the endpoints read: the material in the store, the pending challenges in memory. */
export interface CertificateEndpoints {
  vault: CertificateVault;
  challenges: AcmeChallenges;
}

/** One request for a certificate endpoint, authenticated and routed. */
export interface CertificateCall {
  res: ServerResponse;
  method: string;
  path: string;
  identity: Identity;
  route: Extract<Route, { type: 'certificate' }>;
  store: Store;
  authorize: Authorizer;
}

/** Serves a certificate endpoint (throws an ApiError to be sent as a Status). */
export function serveCertificateEndpoint(eps: CertificateEndpoints | undefined, c: CertificateCall): void {
  requireMethod(c.res, c.method, ['GET']);
  const { name, endpoint } = c.route;
  const attrs: RequestAttributes = { verb: 'get', plural: 'certificates', name, subresource: endpoint, path: c.path };
  if (c.identity.kind === 'admin') {
    throw forbidden(c.identity, attrs, `only the node that serves the certificate may read its ${endpoint}`);
  }
  const cert = c.store.get('certificates', name);
  if (!cert) throw ApiError.notFound('certificates', name);
  const refused = c.authorize(c.identity, { ...attrs, objectNode: cert.spec.node });
  if (refused) throw refused;
  if (!eps) throw new ApiError({ reason: 'NotFound', message: 'this server issues no certificates' });
  if (endpoint === 'material') {
    const m = eps.vault.material(name);
    if (!m) throw new ApiError({ reason: 'NotFound', message: `certificate "${name}" has not been issued yet` });
    const body: CertificateMaterial = {
      cert: m.cert,
      key: m.key,
      ca: m.ca,
      notBefore: m.notBefore,
      notAfter: m.notAfter,
    };
    sendJson(c.res, 200, body, { 'cache-control': 'no-store' });
    return;
  }
  const keyAuth = eps.challenges.get(name, c.route.token ?? '');
  if (keyAuth === undefined) {
    throw new ApiError({
      reason: 'NotFound',
      message: `no ACME challenge "${c.route.token}" is pending for "${name}"`,
    });
  }
  c.res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(keyAuth);
}
