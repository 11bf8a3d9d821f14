import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { spawnSync } from 'node:child_process';
import { Http1Client, TCP_KEEPALIVE_MS, type Http1Options } from './http1.ts';

/**
 * A raw TCP server that answers each request (one per `\r\n\r\n`-terminated head; the tests send no bodies) with
 * `answer(n, socket)`, `n` counting requests across connections. It records how many connections it accepted.
 */
async function rawServer(
  answer: (n: number, socket: Socket) => void,
  timeoutMs = 5000,
): Promise<{
  client: Http1Client;
  /** What the client was made with (to make another one). */
  options: Http1Options;
  connections: () => number;
  requests: string[];
  stop: () => Promise<void>;
}> {
  const sockets: Socket[] = [];
  const requests: string[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    let buf = '';
    socket.setEncoding('latin1').on('data', (d: string) => {
      buf += d;
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        requests.push(buf.slice(0, end));
        buf = buf.slice(end + 4);
        answer(requests.length, socket);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const options: Http1Options = { protocol: 'http:', hostname: '127.0.0.1', port, timeoutMs };
  const client = new Http1Client(options);
  return {
    client,
    options,
    connections: () => sockets.length,
    requests,
    stop: async () => {
      client.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

const GET = { method: 'GET', path: '/x', headers: { accept: 'application/json' } };

/** Writes `text` one byte at a time, so that every boundary (head, chunk size, CRLF, UTF-8 sequence) is split. */
function trickle(socket: Socket, text: string | Buffer): void {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i++) socket.write(bytes.subarray(i, i + 1));
}

test('a chunked answer split at every byte, with extensions, trailers and multi-byte UTF-8, reads whole', async () => {
  const body = 'grüße, 世界';
  const bytes = Buffer.from(body);
  const s = await rawServer((_, socket) =>
    trickle(
      socket,
      Buffer.concat([
        Buffer.from(
          'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nWarning: 299 - "a"\r\nWarning: 299 - "b"\r\n\r\n',
        ),
        Buffer.from(`4;ext=1\r\n`),
        bytes.subarray(0, 4),
        Buffer.from(`\r\n${(bytes.length - 4).toString(16)}\r\n`),
        bytes.subarray(4),
        Buffer.from('\r\n0\r\nX-Trailer: t\r\n\r\n'),
      ]),
    ),
  );
  try {
    const a = await s.client.request(GET);
    assert.equal(a.statusCode, 200);
    assert.equal(a.body, body);
    assert.deepEqual(a.headers.warning, ['299 - "a"', '299 - "b"']);
    assert.equal(a.keepAlive, true);
    assert.match(s.requests[0], /^GET \/x HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\naccept: application\/json$/);
  } finally {
    await s.stop();
  }
});

test('Content-Length answers keep the connection for the next request; 100 Continue is skipped', async () => {
  const s = await rawServer((n, socket) =>
    socket.write(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nbody${n}`),
  );
  try {
    const one = await s.client.request(GET);
    const two = await s.client.request({ ...GET, method: 'POST', body: '{"a":1}' });
    assert.deepEqual([one.statusCode, one.body, two.body], [201, 'body1', 'body2']);
    assert.equal(s.connections(), 1, 'both requests went over one kept-alive connection');
    assert.match(s.requests[1], /\r\ncontent-length: 7$/);
  } finally {
    await s.stop();
  }
});

test('a body without a length runs until the server closes, and that connection is not reused', async () => {
  const s = await rawServer((n, socket) =>
    socket.end(`HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n\r\ngone ${n}`),
  );
  try {
    const one = await s.client.request(GET);
    assert.deepEqual([one.statusCode, one.body, one.keepAlive], [404, 'gone 1', false]);
    assert.equal((await s.client.request(GET)).body, 'gone 2');
    assert.equal(s.connections(), 2);
  } finally {
    await s.stop();
  }
});

test('a request on a kept-alive connection the server dropped is sent again on a fresh one', async () => {
  const s = await rawServer((n, socket) => {
    if (n === 2)
      socket.destroy(); // the server had closed the idle connection just as the request arrived
    else socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nr${n}`);
  });
  try {
    assert.equal((await s.client.request(GET)).body, 'r1');
    assert.equal((await s.client.request(GET)).body, 'r3');
    assert.equal(s.connections(), 2);
  } finally {
    await s.stop();
  }
});

test('a fresh connection dropped before or during the answer fails, and is not sent again', async () => {
  const s = await rawServer((n, socket) => {
    if (n === 1) socket.destroy();
    else socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
  });
  try {
    await assert.rejects(s.client.request(GET), { code: 'ECONNRESET' });
    await assert.rejects(s.client.request(GET), /closed the connection in the middle of its answer/);
    assert.equal(s.requests.length, 2, 'each request was sent once');
  } finally {
    await s.stop();
  }
});

test('a malformed answer is an error naming what was wrong', async () => {
  const s = await rawServer((n, socket) =>
    socket.write(n === 1 ? 'SSH-2.0-OpenSSH\r\n\r\n' : 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'),
  );
  try {
    await assert.rejects(s.client.request(GET), /malformed answer: status line "SSH-2\.0-OpenSSH"/);
    await assert.rejects(s.client.request(GET), /malformed chunked body: chunk size "zz"/);
  } finally {
    await s.stop();
  }
});

test('a server that never answers fails with ETIMEDOUT after the timeout', async () => {
  const s = await rawServer(() => undefined, 200);
  try {
    await assert.rejects(s.client.request(GET), { code: 'ETIMEDOUT', message: 'no answer within 0.2s' });
  } finally {
    await s.stop();
  }
});

test('with maxSockets 1, concurrent requests wait for the one connection instead of opening more', async () => {
  const s = await rawServer((n, socket) => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nr${n}`));
  try {
    const one = new Http1Client({ ...s.options, maxSockets: 1 });
    try {
      const answers = await Promise.all([1, 2, 3, 4].map(() => one.request(GET)));
      assert.deepEqual(answers.map((a) => a.body).sort(), ['r1', 'r2', 'r3', 'r4']);
      assert.equal(s.connections(), 1, 'four concurrent requests, one connection');
    } finally {
      one.close();
    }
  } finally {
    await s.stop();
  }
});

test('requests waiting for a connection being opened share its failure', async () => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as { port: number }).port;
  await new Promise((r) => closed.close(r)); // nothing listens there now: connections are refused
  const one = new Http1Client({ protocol: 'http:', hostname: '127.0.0.1', port, timeoutMs: 5000, maxSockets: 1 });
  const results = await Promise.allSettled([1, 2, 3].map(() => one.request(GET)));
  assert.deepEqual(
    results.map((r) => (r.status === 'rejected' ? (r.reason as NodeJS.ErrnoException).code : 'answered')),
    ['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED'],
  );
});

test('an https connection has its own timeout (connectTimeoutMs), shorter or longer than the request timeout', async () => {
  // A server that accepts TCP connections and never answers the TLS handshake (a control plane that has not yet
  // accepted them from its queue looks the same to the client).
  const sockets: Socket[] = [];
  const mute = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
  const port = (mute.address() as { port: number }).port;
  const client = new Http1Client({
    protocol: 'https:',
    hostname: '127.0.0.1',
    port,
    timeoutMs: 60_000,
    connectTimeoutMs: 300,
  });
  try {
    const t0 = Date.now();
    await assert.rejects(client.request(GET), { code: 'ETIMEDOUT', message: 'no answer within 0.3s' });
    assert.ok(Date.now() - t0 < 30_000, 'failed after the connect timeout, not the request timeout');
  } finally {
    client.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => mute.close(r));
  }
});

test('a kept connection is probed by TCP keep-alive only after a minute idle, not every second', async () => {
  const s = await rawServer((_, socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
  try {
    await s.client.request(GET);
    // ss -o shows the kernel's keep-alive timer of each socket: `timer:(keepalive,59sec,0)`.
    const line = spawnSync('ss', ['-tnoH', 'state', 'established', `dport = :${s.options.port}`], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n')[0];
    const m = /timer:\(keepalive,(?:(\d+)min)?(\d+(?:\.\d+)?)(m?s)ec/.exec(line ?? '');
    assert.ok(m, `a keep-alive timer on the client's socket: ${line}`);
    const ms = Number(m[1] ?? 0) * 60_000 + Number(m[2]) * (m[3] === 'ms' ? 1 : 1000);
    assert.ok(ms > TCP_KEEPALIVE_MS / 2, `first probe in ${ms} ms (${line})`);
  } finally {
    await s.stop();
  }
});
