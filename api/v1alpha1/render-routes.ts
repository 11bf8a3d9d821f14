/**
 * The host resources a Route renders into its node's Declaration (issue 10 contract §5): pure, no I/O.
 *
 * For Route `web` on a node, in this order, owned by `route.web`:
 *   route.web/dir    Directory /var/lib/meshctl/routes/web (0700)
 *   route.web/cert   File …/tls.crt from the Certificate's material (contentFrom cert, 0644)
 *   route.web/key    File …/tls.key from the Certificate's material (contentFrom key, 0600)
 *   route.web/serve  HttpsProxy host → 127.0.0.1:port on the node's https/http ports
 * The HttpsProxy does not depend on the two Files: before the certificate is issued it must already answer
 * the ACME HTTP-01 challenge on the http port (its driver fails, saying so, until the files exist).
 * The Certificate has the Route's name (the Route controller creates it). Routes render after every
 * assignment's resources, ordered by name, so adding a route never reorders what a module renders.
 */
import type { DeclaredResource, Node, Route } from './generated/index.ts';

/** The https port a node serves its routes on when its spec names none. */
export const DEFAULT_HTTPS_PORT = 443;
/** The plain-HTTP port (ACME challenges, redirect) when the node's spec names none. */
export const DEFAULT_HTTP_PORT = 80;
/** Where a route's certificate and key are written on its node (under the agent's root). */
export const ROUTES_DIR = '/var/lib/meshctl/routes';

/** The owner of the resources rendered for a Route. */
export function routeOwner(route: string): string {
  return `route.${route}`;
}

/** The paths of a route's certificate files on its node. */
export function routeFiles(route: string): { dir: string; cert: string; key: string } {
  const dir = `${ROUTES_DIR}/${route}`;
  return { dir, cert: `${dir}/tls.crt`, key: `${dir}/tls.key` };
}

/** The resources of one Route on `node` (see the module comment). */
export function renderRoute(route: Route, node: Node): DeclaredResource[] {
  const name = route.metadata.name ?? '';
  const owner = routeOwner(name);
  const id = (s: string): string => `${owner}/${s}`;
  const files = routeFiles(name);
  const httpsPort = node.spec?.httpsPort ?? DEFAULT_HTTPS_PORT;
  const httpPort = node.spec?.httpPort ?? DEFAULT_HTTP_PORT;
  return [
    { id: id('dir'), owner, kind: 'Directory', spec: { path: files.dir, mode: '0700' } },
    {
      id: id('cert'),
      owner,
      kind: 'File',
      spec: { path: files.cert, contentFrom: { certificate: name, key: 'cert' }, mode: '0644' },
      dependsOn: [id('dir')],
    },
    {
      id: id('key'),
      owner,
      kind: 'File',
      spec: { path: files.key, contentFrom: { certificate: name, key: 'key' }, mode: '0600' },
      dependsOn: [id('dir')],
    },
    {
      id: id('serve'),
      owner,
      kind: 'HttpsProxy',
      spec: {
        host: route.spec.host,
        port: route.spec.port,
        certificate: name,
        certFile: files.cert,
        keyFile: files.key,
        httpsPort,
        httpPort,
      },
      dependsOn: [id('dir')],
    },
  ];
}

/** The resources of every Route of `node` (by name), to append after the assignments' resources. */
export function renderRoutes(routes: readonly Route[], node: Node): DeclaredResource[] {
  const name = node.metadata.name ?? '';
  return routes
    .filter((r) => r.spec.node === name && !r.metadata.deletionTimestamp)
    .sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1))
    .flatMap((r) => renderRoute(r, node));
}
