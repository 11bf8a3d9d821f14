import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type TLSSocket, type ConnectionOptions } from 'node:tls';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { Http1Client } from '../client/http1.ts';
import { KEEP_ALIVE_TIMEOUT_MS, LISTEN_BACKLOG, listen } from './listen.ts';
import { createCA, issueServingCert } from './pki/pki.ts';

/** Handshakes with the server; resolves with the protocol and cipher, or the error that ended it. */
function handshake(
  port: number,
  ca: string,
  opts: ConnectionOptions,
): Promise<{ protocol?: string; cipher?: string; alpn?: string | false | null; error?: Error }> {
  return new Promise((resolve) => {
    const socket: TLSSocket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost', ...opts }, () => {
      const cipher = socket.getCipher().standardName;
      resolve({ protocol: socket.getProtocol() ?? undefined, cipher, alpn: socket.alpnProtocol });
      socket.end();
    });
    socket.once('error', (error) => resolve({ error }));
  });
}

test('HTTPS offers TLS 1.3 and TLS 1.2 AEAD suites only: a CBC-only TLS 1.2 client is refused', async (t) => {
  const ca = await createCA({ commonName: 'test CA' });
  const serving = await issueServingCert({ ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const app = {
    handle: (_req: unknown, res: { end(s: string): void }) => res.end('ok'),
    close() {},
    openWatches: () => 0,
  };
  const server = await listen({ app, host: '127.0.0.1', port: 0, tls: { cert: serving.certPem, key: serving.keyPem } });
  t.after(() => server.close());

  const cbc = await handshake(server.port, ca.certPem, {
    maxVersion: 'TLSv1.2',
    ciphers: 'ECDHE-ECDSA-AES256-SHA:ECDHE-ECDSA-AES128-SHA',
  });
  assert.ok(cbc.error, `a CBC-only client was accepted with ${cbc.cipher}`);
  assert.match(String(cbc.error.message), /handshake failure|no shared cipher|alert/i);

  for (const cipher of [
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
  ]) {
    const aead = await handshake(server.port, ca.certPem, { maxVersion: 'TLSv1.2', ciphers: cipher });
    assert.equal(aead.error, undefined, `${cipher}: ${String(aead.error)}`);
    assert.equal(aead.protocol, 'TLSv1.2');
  }
  const modern = await handshake(server.port, ca.certPem, {});
  assert.equal(modern.protocol, 'TLSv1.3');

  // ALPN as Node's https server negotiates it by default: HTTP/1.1 when offered (Go's client, kubectl, offers h2
  // first), no ALPN when none is offered, and a client that speaks only h2 refused.
  const go = await handshake(server.port, ca.certPem, { ALPNProtocols: ['h2', 'http/1.1'] });
  assert.equal(go.alpn, 'http/1.1');
  assert.equal(modern.alpn, false);
  const h2 = await handshake(server.port, ca.certPem, { ALPNProtocols: ['h2'] });
  assert.match(String(h2.error?.message), /no application protocol|alert/i);
});

test('connections are kept alive longer than a heartbeat interval, and the accept queue is bounded', async (t) => {
  const app = {
    handle: (_req: unknown, res: { end(s: string): void }) => res.end('ok'),
    close() {},
    openWatches: () => 0,
  };
  const server = await listen({ app, host: '127.0.0.1', port: 0 });
  t.after(() => server.close());
  const keepAlive = await new Promise<string | undefined>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: server.port, path: '/', headers: { connection: 'keep-alive' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.headersDistinct['keep-alive']?.[0]));
      },
    );
    req.on('error', reject);
    req.end();
  });
  assert.equal(
    keepAlive,
    `timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`,
    'what the server tells clients it keeps idle connections',
  );
  // ss shows a listening socket's backlog as its Send-Q (capped by net.core.somaxconn).
  const line = execFileSync('ss', ['-ltnH', `sport = :${server.port}`], { encoding: 'utf8' }).trim();
  const backlog = Number(line.split(/\s+/)[2]);
  const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
  assert.equal(backlog, Math.min(LISTEN_BACKLOG, somaxconn), `ss: ${line}`);
  // A full queue is served within an agent's two minutes for a new connection (AGENT_CONNECTION) down to 35 accepts
  // a second, and holds the heartbeat connections of 4,000 agents reconnecting at once.
  assert.ok(LISTEN_BACKLOG / 35 <= 120, `the accept queue ${LISTEN_BACKLOG} waits longer than 120 s at 35 accepts/s`);
  assert.ok(LISTEN_BACKLOG >= 4000, `the accept queue ${LISTEN_BACKLOG} drops the SYNs of a mesh reconnecting`);
});

test('a restarted server with the same ticket key resumes its clients’ TLS sessions, also after refusing them meanwhile', async (t) => {
  const ca = await createCA({ commonName: 'test CA' });
  const serving = await issueServingCert({ ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const tls = { cert: serving.certPem, key: serving.keyPem, ticketKeys: randomBytes(48) };
  // Answers whether the connection the request came on resumed a session.
  const app = {
    handle: (req: IncomingMessage, res: ServerResponse) => res.end(String((req.socket as TLSSocket).isSessionReused())),
    close() {},
    openWatches: () => 0,
  };
  const first = await listen({ app, host: '127.0.0.1', port: 0, tls });
  const client = new Http1Client({
    protocol: 'https:',
    hostname: '127.0.0.1',
    port: first.port,
    ca: ca.certPem,
    timeoutMs: 5000,
  });
  let server = first;
  t.after(async () => {
    client.close();
    await server.close();
  });
  const resumed = async (): Promise<string> => (await client.request({ method: 'GET', path: '/', headers: {} })).body;
  assert.equal(await resumed(), 'false');
  await first.close(); // ends the client's connection too
  await assert.rejects(resumed(), { code: 'ECONNREFUSED' });
  server = await listen({ app, host: '127.0.0.1', port: first.port, tls });
  assert.equal(await resumed(), 'true', 'the session from before the restart was resumed');

  // A renewed serving certificate keeps the key: the sessions are still resumed.
  const renewed = await issueServingCert({ ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  server.setTls({ cert: renewed.certPem, key: renewed.keyPem });
  await server.close();
  server = await listen({
    app,
    host: '127.0.0.1',
    port: first.port,
    tls: { ...tls, cert: renewed.certPem, key: renewed.keyPem },
  });
  assert.equal(await resumed(), 'true');

  // Another key (a new one per process, as without the file): a full handshake.
  await server.close();
  server = await listen({ app, host: '127.0.0.1', port: first.port, tls: { ...tls, ticketKeys: randomBytes(48) } });
  assert.equal(await resumed(), 'false');
});
