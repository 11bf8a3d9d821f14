// The agent's TLS terminator with real listeners on loopback: SNI picks the certificate, requests reach the
// local service with X-Forwarded-*, an Upgrade is passed through, plain HTTP answers ACME challenges and
// redirects with 308, and a renewed certificate is served on the next handshake without a new listener.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import { connect } from 'node:tls';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { createProxyServer, type ProxyRoute } from './proxy-server.ts';
import { freePort, opensslSelfSigned } from '../testing.ts';

const quiet = { info() {}, error() {} };

/** A self-signed certificate for `host` (openssl), as PEM strings. */
function selfSigned(dir: string, host: string, tag: string): { cert: string; key: string } {
  const paths = { keyPath: join(dir, `${tag}.key`), certPath: join(dir, `${tag}.crt`) };
  return opensslSelfSigned({ ...paths, commonName: host, subjectAltName: `DNS:${host}`, days: 1 });
}

/** One HTTPS GET to 127.0.0.1:port with SNI `servername`: status, headers, body and the served leaf. */
async function httpsGet(
  port: number,
  servername: string,
  ca: string,
  path = '/',
  headers: Record<string, string> = {},
) {
  const socket = connect({ host: '127.0.0.1', port, servername, ca });
  await once(socket, 'secureConnect');
  const leaf = socket.getPeerX509Certificate();
  const req = httpRequest({ createConnection: () => socket, path, headers: { host: servername, ...headers } });
  req.end();
  const [res] = (await once(req, 'response')) as [import('node:http').IncomingMessage];
  let body = '';
  for await (const c of res) body += String(c);
  socket.destroy();
  return { status: res.statusCode, headers: res.headers, body, leaf };
}

async function httpGet(port: number, host: string, path: string) {
  const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } });
  req.end();
  const [res] = (await once(req, 'response')) as [import('node:http').IncomingMessage];
  let body = '';
  for await (const c of res) body += String(c);
  return { status: res.statusCode, headers: res.headers, body };
}

test('serves a route by SNI, forwards with X-Forwarded-*, answers challenges, redirects, and swaps a renewed certificate', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-test-'));
  const seen: Array<Record<string, unknown>> = [];
  const backend = createServer((req, res) => {
    seen.push({ url: req.url, ...req.headers });
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello from ${req.url}`);
  });
  backend.on('upgrade', (req, socket) => {
    socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: echo\r\nconnection: upgrade\r\n\r\n');
    socket.pipe(socket);
  });
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const challenges = new Map([['web:tok-1', 'tok-1.thumbprint']]);
  const proxy = createProxyServer({
    logger: quiet,
    fetchChallenge: async (cert, token) => challenges.get(`${cert}:${token}`),
  });
  t.after(async () => {
    await proxy.close();
    backend.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const [httpsPort, httpPort] = [await freePort(), await freePort()];
  const first = selfSigned(dir, 'web.mesh.test', 'one');
  const route = (m: { cert: string; key: string }, fingerprint: string): ProxyRoute => ({
    host: 'web.mesh.test',
    port: (backend.address() as { port: number }).port,
    certificate: 'web',
    ...m,
    httpsPort,
    httpPort,
    listen: '127.0.0.1',
    fingerprint,
  });
  await proxy.set(route(first, 'one'));

  const got = await httpsGet(httpsPort, 'web.mesh.test', first.cert, '/hello');
  assert.equal(got.status, 200);
  assert.equal(got.body, 'hello from /hello');
  assert.equal(seen[0]['x-forwarded-proto'], 'https');
  assert.equal(seen[0]['x-forwarded-for'], '127.0.0.1');
  assert.equal(seen[0]['x-forwarded-host'], 'web.mesh.test');
  assert.equal(got.leaf?.fingerprint256, new X509Certificate(first.cert).fingerprint256);

  // An unknown name fails the handshake: no default certificate is handed out.
  const other = connect({
    host: '127.0.0.1',
    port: httpsPort,
    servername: 'other.mesh.test',
    rejectUnauthorized: false,
  });
  await assert.rejects(once(other, 'secureConnect'), /alert|handshake|socket|ECONNRESET/i);
  other.destroy();

  // Plain HTTP: the challenge of the route's Certificate, a 404 for an unknown token, 308 for everything else.
  const ch = await httpGet(httpPort, 'web.mesh.test', '/.well-known/acme-challenge/tok-1');
  assert.deepEqual([ch.status, ch.body], [200, 'tok-1.thumbprint']);
  assert.equal((await httpGet(httpPort, 'web.mesh.test', '/.well-known/acme-challenge/nope')).status, 404);
  const redirect = await httpGet(httpPort, 'web.mesh.test:80', '/a/b?c=d');
  assert.equal(redirect.status, 308);
  assert.equal(redirect.headers.location, `https://web.mesh.test:${httpsPort}/a/b?c=d`);

  // An Upgrade (what a WebSocket does) is passed through both ways.
  const ws = connect({ host: '127.0.0.1', port: httpsPort, servername: 'web.mesh.test', ca: first.cert });
  await once(ws, 'secureConnect');
  ws.write('GET /socket HTTP/1.1\r\nhost: web.mesh.test\r\nupgrade: echo\r\nconnection: upgrade\r\n\r\n');
  let echoed = '';
  ws.on('data', (d) => (echoed += String(d)));
  await waitUntil(() => echoed.includes('101 Switching Protocols'), 'the 101 answer');
  ws.write('ping-42');
  await waitUntil(() => echoed.includes('ping-42'), 'the echo through the upgraded connection');
  ws.destroy();

  // A renewed certificate: the next handshake gets it, on the same listener.
  const second = selfSigned(dir, 'web.mesh.test', 'two');
  await proxy.set(route(second, 'two'));
  const renewed = await httpsGet(httpsPort, 'web.mesh.test', second.cert);
  assert.equal(renewed.leaf?.fingerprint256, new X509Certificate(second.cert).fingerprint256);

  // The last route removed closes the listeners.
  await proxy.delete('web.mesh.test');
  const refused = connect({ host: '127.0.0.1', port: httpsPort, servername: 'web.mesh.test', ca: second.cert });
  await assert.rejects(once(refused, 'secureConnect'), /ECONNREFUSED/);
});

test('a route whose certificate is not held yet answers challenges on http and refuses TLS', async (t) => {
  const proxy = createProxyServer({ logger: quiet, fetchChallenge: async (_c, token) => `${token}.ka` });
  t.after(() => proxy.close());
  const [httpsPort, httpPort] = [await freePort(), await freePort()];
  await proxy.set({
    host: 'new.mesh.test',
    port: 1,
    certificate: 'new',
    httpsPort,
    httpPort,
    listen: '127.0.0.1',
    fingerprint: 'none',
  });
  const ch = await httpGet(httpPort, 'new.mesh.test', '/.well-known/acme-challenge/abc');
  assert.deepEqual([ch.status, ch.body], [200, 'abc.ka']);
  const tls = connect({ host: '127.0.0.1', port: httpsPort, servername: 'new.mesh.test', rejectUnauthorized: false });
  await assert.rejects(once(tls, 'secureConnect'), /alert|handshake|socket|ECONNRESET/i);
  tls.destroy();
});

async function waitUntil(fn: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
