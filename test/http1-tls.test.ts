/**
 * api/client/http1.ts (and the streams of http-transport.ts) over TLS, against a TLS server with the control plane's own certificates (made by the real
 * first-start code; api/client's tests may not import api/server, so this test lives here).
 */
import { mock, test } from 'node:test';
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { Http1Client } from '../api/client/http1.ts';
import { HttpTransport } from '../api/client/http-transport.ts';
import { ensureControlPlaneFiles } from '../api/server/pki/first-start.ts';

const GET = { method: 'GET', path: '/x', headers: { accept: 'application/json' } };

test('over TLS: the server is verified against the CA, and a new connection resumes the last session', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-http1-'));
  const files = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  const resumed: boolean[] = [];
  const server = createTlsServer({ cert: files.serving.certPem, key: files.serving.keyPem }, (socket: TLSSocket) => {
    resumed.push(socket.isSessionReused());
    socket.on('data', () => void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const opts = { protocol: 'https:', hostname: '127.0.0.1', port, timeoutMs: 5000 };
  const client = new Http1Client({ ...opts, ca: files.ca.certPem });
  const stranger = new Http1Client(opts); // Node's root certificates only: the mesh CA is not among them
  try {
    assert.equal((await client.request(GET)).body, 'ok');
    client.close(); // drops the connection, keeps the session
    assert.equal((await client.request(GET)).body, 'ok');
    assert.deepEqual(resumed, [false, true]);
    await assert.rejects(stranger.request(GET), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  } finally {
    client.close();
    stranger.close();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('connections verified against the same CA share one TLS context, made at the first', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-http1-'));
  const files = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  const server = createTlsServer({ cert: files.serving.certPem, key: files.serving.keyPem }, (socket: TLSSocket) => {
    socket.on('data', () => void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const opts = { protocol: 'https:', hostname: '127.0.0.1', port, timeoutMs: 5000, ca: files.ca.certPem };
  // The module object node:tls's own connect() calls createSecureContext on when given no context.
  const tls = createRequire(import.meta.url)('node:tls') as typeof import('node:tls');
  const made = mock.method(tls, 'createSecureContext');
  const clients = [new Http1Client(opts), new Http1Client(opts)];
  try {
    for (const client of [...clients, ...clients]) {
      assert.equal((await client.request(GET)).body, 'ok');
      client.close(); // the next request opens a new connection
    }
    assert.equal(made.mock.callCount(), 1, 'one context for four connections of two clients');
  } finally {
    made.mock.restore();
    for (const c of clients) c.close();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('streams (watches, followed logs, backup archives) over node:https share the one TLS context of their CA too', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-http1-'));
  const files = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  // Every answer closes its connection, so that each stream opens a new one.
  const server = createHttpsServer({ cert: files.serving.certPem, key: files.serving.keyPem }, (_req, res) =>
    res.writeHead(200, { connection: 'close', 'content-type': 'application/json' }).end('{}'),
  );
  let connections = 0;
  server.on('secureConnection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const config = { server: `https://127.0.0.1:${port}`, caData: files.ca.certPem, token: 't' };
  const tls = createRequire(import.meta.url)('node:tls') as typeof import('node:tls');
  const made = mock.method(tls, 'createSecureContext');
  const transports = [new HttpTransport({ config }), new HttpTransport({ config })];
  try {
    for (const transport of [...transports, ...transports]) {
      const res = await transport.send({ method: 'GET', path: '/watch', stream: true });
      res.resume();
      await new Promise((r) => res.on('end', r));
    }
    assert.equal(connections, 4);
    assert.equal(made.mock.callCount(), 1, 'one context for four connections of two transports');
  } finally {
    made.mock.restore();
    for (const t of transports) t.close();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
});
