import { test, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import tls, { type TLSSocket } from 'node:tls';
import { startServer, type TestServer } from '../../test/harness.ts';
import { HttpTransport } from './http-transport.ts';
import { TCP_KEEPALIVE_MS } from './http1.ts';

let server: TestServer;

before(async () => {
  server = await startServer();
});
after(async () => {
  await server.stop();
});

/** A port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  return port;
}

const NODES = { method: 'GET', path: '/apis/meshctl.dev/v1alpha1/nodes' } as const;
const WATCH = { method: 'GET', path: '/apis/meshctl.dev/v1alpha1/nodes?watch=true' } as const;

test('a refused connection makes no TLS socket, for calls and for streams; a TCP connection then gets one', async (t) => {
  const connects = t.mock.method(tls, 'connect');
  const refused = new HttpTransport({
    config: { ...server.config, server: `https://127.0.0.1:${await closedPort()}` },
  });
  await assert.rejects(refused.json(NODES), /ECONNREFUSED/);
  await assert.rejects(refused.send(WATCH), /ECONNREFUSED/);
  assert.equal(connects.mock.callCount(), 0, 'tls.connect was not called for refused connections');
  refused.close();

  const reachable = new HttpTransport({ config: server.config });
  try {
    await reachable.json(NODES);
    assert.equal(connects.mock.callCount(), 1);
    const res = await reachable.send(WATCH);
    assert.equal(res.statusCode, 200);
    assert.equal(connects.mock.callCount(), 2);
    assert.equal((res.socket as TLSSocket).authorized, true, 'the stream is verified against the CA');
    res.destroy();
  } finally {
    reachable.close();
    mock.restoreAll();
  }
});

test("a stream's new connection resumes the TLS session of the previous one, and is kept with TCP keep-alive", async () => {
  const transport = new HttpTransport({ config: server.config });
  try {
    const first = await transport.send(WATCH);
    const firstSocket = first.socket as TLSSocket;
    assert.equal(firstSocket.isSessionReused(), false);
    // The session tickets arrive after the handshake; the agent caches the session when they do.
    await new Promise<void>((resolve) => {
      if (firstSocket.getSession()) resolve();
      else firstSocket.once('session', () => resolve());
    });
    // ss -o shows the kernel's keep-alive timer of each socket: `timer:(keepalive,59sec,0)`.
    const port = new URL(server.url).port;
    const line = spawnSync('ss', ['-tnoH', 'state', 'established', `dport = :${port}`], { encoding: 'utf8' })
      .stdout.split('\n')
      .find((l) => l.includes(`:${firstSocket.localPort} `));
    const m = /timer:\(keepalive,(?:(\d+)min)?(\d+(?:\.\d+)?)(m?s)ec/.exec(line ?? '');
    assert.ok(m, `a keep-alive timer on the stream's socket: ${line}`);
    const ms = Number(m[1] ?? 0) * 60_000 + Number(m[2]) * (m[3] === 'ms' ? 1 : 1000);
    assert.ok(ms > TCP_KEEPALIVE_MS / 2, `first probe in ${ms} ms (${line})`);
    first.destroy(); // a stream ended mid-answer: its connection is not kept
    const second = await transport.send(WATCH);
    assert.notEqual(second.socket, firstSocket);
    assert.equal((second.socket as TLSSocket).isSessionReused(), true);
    second.destroy();
  } finally {
    transport.close();
  }
});

test('closing the transport fails a stream whose connection is still being made', async () => {
  const transport = new HttpTransport({ config: server.config });
  const pending = transport.send(WATCH); // its TCP connection is being made
  transport.close();
  // Had the connection gone on, the watch would have been opened on the server and answered.
  await assert.rejects(pending, /socket hang up/);
});
