import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Route } from './generated/index.ts';
import { renderRoutes } from './render-routes.ts';

const node = (spec: Node['spec']): Node => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name: 'a' },
  spec,
});
const route = (name: string, nodeName = 'a'): Route => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Route',
  metadata: { name },
  spec: { host: `${name}.example.com`, node: nodeName, port: 8080 },
});

test("a node's routes, by name: a 0700 dir, cert and key Files from the Certificate (key 0600), then the HttpsProxy", () => {
  const rs = renderRoutes(
    [route('zeta'), route('alpha'), route('other', 'b')],
    node({ httpsPort: 8443, httpPort: 8080 }),
  );
  assert.deepEqual(
    rs.map((r) => r.id),
    [
      'route.alpha/dir',
      'route.alpha/cert',
      'route.alpha/key',
      'route.alpha/serve',
      'route.zeta/dir',
      'route.zeta/cert',
      'route.zeta/key',
      'route.zeta/serve',
    ],
  );
  assert.ok(rs.every((r) => r.owner.startsWith('route.')));
  const [dir, cert, key, serve] = rs;
  assert.deepEqual(dir?.spec, { path: '/var/lib/meshctl/routes/alpha', mode: '0700' });
  assert.deepEqual(cert?.spec, {
    path: '/var/lib/meshctl/routes/alpha/tls.crt',
    contentFrom: { certificate: 'alpha', key: 'cert' },
    mode: '0644',
  });
  assert.deepEqual(key?.spec, {
    path: '/var/lib/meshctl/routes/alpha/tls.key',
    contentFrom: { certificate: 'alpha', key: 'key' },
    mode: '0600',
  });
  assert.equal(serve?.kind, 'HttpsProxy');
  assert.deepEqual(serve?.spec, {
    host: 'alpha.example.com',
    port: 8080,
    certificate: 'alpha',
    certFile: '/var/lib/meshctl/routes/alpha/tls.crt',
    keyFile: '/var/lib/meshctl/routes/alpha/tls.key',
    httpsPort: 8443,
    httpPort: 8080,
  });
  assert.deepEqual(serve?.dependsOn, ['route.alpha/dir'], 'served on http before the certificate exists');
});

test('ports default to 443 and 80', () => {
  const serve = renderRoutes([route('web')], node({})).find((r) => r.kind === 'HttpsProxy');
  assert.deepEqual(
    [
      serve?.spec && 'httpsPort' in serve.spec && serve.spec.httpsPort,
      serve?.spec && 'httpPort' in serve.spec && serve.spec.httpPort,
    ],
    [443, 80],
  );
});
