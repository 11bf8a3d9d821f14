/**
 * The `acme` issuer against a real ACME CA, Debian's pebble (test/pebble.ts): the real API server and store
 * (in-process), the Certificate controller through the real client, HTTP-01 answered on pebble's validation
 * port by a small responder standing in for the agent (until i10-serve's agent serves challenges): it fetches
 * each key authorization from the control plane's challenge endpoint with the node's credential, as the agent
 * does. Shown: the certificate chains to pebble's root (fetched from its management port, new at every start),
 * it is renewed before it expires (by an account without an e-mail: a renewal must not re-register it), and with pebble stopped a renewal turns Ready=False with a Warning Event.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Agent } from 'node:https';
import { once } from 'node:events';
import { connect, createServer as createTlsServer } from 'node:tls';
import * as acme from 'acme-client';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import { createJsonLogger, silentLogger } from '../../api/meta/logger.ts';
import { SECRETS } from '../../api/server/access/secrets.ts';
import { ACME_ACCOUNT_SECRET } from '../../api/server/certs/vault.ts';
import type { Certificate, Event } from '../../api/v1alpha1/generated/index.ts';
import {
  acmeChallengePath,
  certificateMaterialPath,
  parseCertificateMaterial,
} from '../../api/wire/certificate-material.ts';
import { acmeIssuer } from '../../controllers/acme-issuer.ts';
import { createCertificateController } from '../../controllers/certificate-controller.ts';
import { createManager, type Manager } from '../../controllers/runtime/manager.ts';
import { eventually } from '../eventually.ts';
import { startServer, type TestServer } from '../harness.ts';
import { startPebble, type Pebble } from '../pebble.ts';

let pebble: Pebble;
let server: TestServer;
let client: HttpClient;
let manager: Manager;
let responder: Server;
/** Which Certificate a host's challenges belong to (the agent finds it from the route in its declaration). */
const CERT_OF_HOST: Record<string, string> = { 'web.mesh.test': 'web' };

before(async () => {
  pebble = await startPebble({ validitySeconds: 30 });
  acme.axios.defaults.httpsAgent = new Agent({ ca: pebble.tlsCa }); // trust pebble's own listener
  server = await startServer({
    insecure: true,
    meshAccess: true,
    certificates: true,
    tokens: { 'tok-a': { kind: 'node', name: 'node-a' } },
  });
  client = createClient(server.config);
  responder = createServer((req, res) => {
    const m = /^\/\.well-known\/acme-challenge\/([\w-]+)$/.exec(req.url ?? '');
    const name = CERT_OF_HOST[(req.headers.host ?? '').replace(/:\d+$/, '')];
    if (!m?.[1] || !name) return void res.writeHead(404).end();
    server
      .request('GET', acmeChallengePath(name, m[1]), undefined, { authorization: 'Bearer tok-a' })
      .then((r) => res.writeHead(r.status, { 'content-type': 'text/plain' }).end(r.text))
      .catch(() => res.writeHead(502).end());
  });
  responder.listen(pebble.httpPort, '127.0.0.1');
  await once(responder, 'listening');
  await client.create('meshes', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Mesh',
    metadata: { name: 'mesh' },
    spec: {
      certificates: {
        issuer: 'acme',
        renewBefore: '24s',
        acme: { directoryUrl: pebble.directoryUrl },
      },
    },
  });
  manager = createManager({
    client,
    logger: process.env.DBG ? createJsonLogger() : silentLogger,
    backoff: { baseMs: 20, maxMs: 200 },
  });
  const { vault, challenges } = server.certificates!;
  const issuer = acmeIssuer({
    vault,
    challenges,
    mesh: () => manager.informerFor('meshes').get('mesh'),
    pollMs: { min: 100, max: 500 },
  });
  manager.add(
    createCertificateController({ manager, vault, issuers: { acme: issuer }, retry: { baseMs: 1000, maxMs: 4000 } }),
  );
  assert.equal(await manager.start(), true);
});

after(async () => {
  await manager?.stop();
  client?.close();
  responder?.close();
  await server?.stop();
  await pebble?.close();
});

const get = (name: string): Promise<Certificate> => client.get('certificates', name);
const eventsOf = async (name: string): Promise<Event[]> =>
  (await client.list('events')).items.filter((e) => e.involvedObject.name === name);

function waitStatus(name: string, check: (c: Certificate) => boolean, timeoutMs = 60_000): Promise<Certificate> {
  return eventually(
    async () => {
      const c = await get(name);
      assert.ok(check(c), `${name}: ${JSON.stringify(c.status)}`);
      return c;
    },
    { timeoutMs, intervalMs: 100 },
  );
}
const ready = (c: Certificate): string | undefined => c.status?.conditions?.find((x) => x.type === 'Ready')?.status;

test('a certificate from pebble chains to its root, is renewed before it expires, and fails loudly once pebble is gone', async () => {
  await client.create('certificates', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Certificate',
    metadata: { name: 'web' },
    spec: { dnsNames: ['web.mesh.test'], node: 'node-a' },
  });
  const first = await waitStatus('web', (c) => ready(c) === 'True');
  const r = await server.request('GET', certificateMaterialPath('web'), undefined, { authorization: 'Bearer tok-a' });
  assert.equal(r.status, 200, r.text);
  const m = parseCertificateMaterial(JSON.parse(r.text));
  const [leafPem, interPem] = acme.crypto.splitPemChain(m.cert);
  const leaf = new X509Certificate(leafPem);
  const inter = new X509Certificate(interPem);
  const root = new X509Certificate(pebble.root);
  assert.ok(leaf.checkIssued(inter) && leaf.verify(inter.publicKey), 'the leaf is signed by the intermediate');
  assert.ok(inter.checkIssued(root) && inter.verify(root.publicKey), "the intermediate is signed by pebble's root");
  assert.equal(leaf.subjectAltName, 'DNS:web.mesh.test');
  assert.equal(m.notAfter, first.status?.notAfter);
  await tlsHandshake(m.cert, m.key, pebble.root);
  const account = server.store.get(SECRETS, ACME_ACCOUNT_SECRET) as { data?: Record<string, string> } | undefined;
  assert.match(account?.data?.key ?? '', /PRIVATE KEY/, 'the ACME account key is kept in the store');
  assert.match(account?.data?.url ?? '', /^https:\/\/127\.0\.0\.1:\d+\//, 'and its URL, once registered');

  const firstNotAfter = Date.parse(first.status!.notAfter!);
  const renewed = await waitStatus('web', (c) => ready(c) === 'True' && c.status?.notAfter !== first.status?.notAfter);
  assert.ok(Date.now() < firstNotAfter, 'renewed before the first certificate expired');
  assert.ok(Date.parse(renewed.status!.notAfter!) > firstNotAfter);

  await pebble.kill();
  const failed = await waitStatus('web', (c) => ready(c) === 'False');
  const cond = failed.status?.conditions?.find((x) => x.type === 'Ready');
  assert.equal(cond?.reason, 'CAUnreachable', JSON.stringify(cond));
  assert.match(cond?.message ?? '', /could not reach the ACME CA at https:\/\/127\.0\.0\.1:\d+\/dir: ECONNREFUSED/);
  assert.ok((failed.status?.failedAttempts ?? 0) >= 1);
  await eventually(async () => {
    const w = (await eventsOf('web')).filter((e) => e.type === 'Warning' && e.reason === 'CAUnreachable');
    assert.ok(w.length >= 1, 'a Warning event about the failed renewal');
  });
  const again = await waitStatus('web', (c) => (c.status?.failedAttempts ?? 0) >= 2);
  assert.equal(ready(again), 'False', 'the failure stays reported while the renewal keeps failing');
  const gap = Date.parse(again.status!.lastFailure!.time) - Date.parse(failed.status!.lastFailure!.time);
  assert.ok(gap >= 1000, `the retry waited for the backoff (${gap} ms)`);
});

/** A real TLS handshake with the issued key and chain, trusting only pebble's root. */
async function tlsHandshake(cert: string, key: string, root: string): Promise<void> {
  const srv = createTlsServer({ key, cert });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  const sock = connect({ host: '127.0.0.1', port, servername: 'web.mesh.test', ca: root });
  await once(sock, 'secureConnect');
  assert.equal(sock.authorized, true);
  sock.destroy();
  srv.close();
}
