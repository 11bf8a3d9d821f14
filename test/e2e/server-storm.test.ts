// A storm of garbage (random bytes, bad request lines and paths, huge headers, truncated bodies, aborts
// mid-body and mid-watch, random objects) while real writes go on: the server stays up, never answers 5xx,
// and the store reopens holding exactly what the API served.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../api/store/index.ts';
import { validateObject } from '../../api/v1alpha1/validate.ts';
import { openStream, startServer, type TestServer } from '../harness.ts';

const API = '/apis/meshctl.dev/v1alpha1';
const seed = Number(process.env.STORM_SEED ?? Date.now() % 1e9);

/** A small seeded PRNG (mulberry32), so a failing storm can be replayed with STORM_SEED. */
function prng(s: number): () => number {
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(seed);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));

/** Writes `data` on a raw connection, optionally hangs up after `abortMs`; resolves with what came back. */
function raw(
  port: number,
  data: Buffer | string,
  opts: { abortMs?: number; halfClose?: boolean } = {},
): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    let got = '';
    const done = (): void => {
      clearTimeout(timer);
      resolve(got);
    };
    const timer = setTimeout(() => sock.destroy(), opts.abortMs ?? 2000);
    sock.on('data', (d) => {
      got += d.toString('latin1');
    });
    sock.on('error', () => {});
    sock.on('close', done);
    sock.write(data);
    if (opts.halfClose) sock.end();
  });
}

/** The status code of a raw HTTP response, or 0 when the server just hung up. */
const statusOf = (response: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);

function randomValue(depth = 0): unknown {
  const r = rand();
  if (depth > 3 || r < 0.3)
    return pick([null, true, 0, -1, 1e308, 'x', '', 'Bad Value!', '192.0.2.1:51820', 'a'.repeat(300)]);
  if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(depth + 1));
  return Object.fromEntries(
    Array.from({ length: Math.floor(rand() * 4) }, () => [
      pick([
        'site',
        'endpoint',
        'name',
        'labels',
        'finalizers',
        'resourceVersion',
        'uid',
        '__proto__',
        'constructor',
        'x',
      ]),
      randomValue(depth + 1),
    ]),
  );
}

/** An object that is valid about half the time, and otherwise wrong somewhere (or everywhere). */
function randomObject(): Record<string, unknown> {
  const sane = rand() < 0.5;
  const obj: Record<string, unknown> = {
    apiVersion: sane || rand() < 0.7 ? 'meshctl.dev/v1alpha1' : pick(['v1', undefined, 3]),
    kind: sane || rand() < 0.7 ? 'Node' : pick(['Module', 7, null]),
    metadata:
      sane || rand() < 0.7
        ? { name: `storm-${Math.floor(rand() * 20)}`, labels: sane ? { a: 'b' } : randomValue() }
        : randomValue(),
  };
  if (sane || rand() < 0.5) obj.spec = sane ? { site: pick(['home', 'lab']) } : randomValue();
  if (rand() < 0.3) obj.status = sane ? { reachable: rand() < 0.5 } : randomValue();
  return obj;
}

const REQUEST_LINES = [
  'GET / HTTP/1.1',
  'FOO /apis HTTP/1.1',
  'GET apis HTTP/1.1',
  'GET http://x/apis HTTP/1.1',
  'GET /apis HTTP/9.9',
  `GET ${API}/nodes/%zz HTTP/1.1`,
  `GET ${API}/nodes/${'x'.repeat(5000)} HTTP/1.1`,
  `GET ${API}/../../etc/passwd HTTP/1.1`,
  `GET ${API}//nodes HTTP/1.1`,
  `GET ${API}/nodes?watch=1&resourceVersion=-5 HTTP/1.1`,
  `OPTIONS ${API}/nodes HTTP/1.1`,
  `TRACE ${API}/nodes HTTP/1.1`,
  `PATCH ${API}/nodes HTTP/1.1`,
  `GET /apis/meshctl.dev/v1alpha1/watch/nodes/a/b HTTP/1.1`,
];

async function garbage(srv: TestServer, tlsPort: number, port: number, statuses: number[]): Promise<void> {
  const auth = `Authorization: Bearer ${srv.adminToken}\r\n`;
  const jobs: Promise<unknown>[] = [];
  for (let i = 0; i < 40; i++) jobs.push(raw(port, bytes(1 + Math.floor(rand() * 4000)), { halfClose: true }));
  for (let i = 0; i < 20; i++) jobs.push(raw(tlsPort, bytes(1 + Math.floor(rand() * 2000)), { halfClose: true }));
  for (const line of REQUEST_LINES)
    jobs.push(
      raw(port, `${line}\r\nHost: x\r\n${auth}\r\n`, { halfClose: true }).then((r) => statuses.push(statusOf(r))),
    );
  jobs.push(
    raw(port, `GET ${API}/nodes HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(64 * 1024)}\r\n\r\n`).then((r) =>
      assert.equal(statusOf(r), 431),
    ),
  );
  for (let i = 0; i < 20; i++) {
    const body = JSON.stringify(randomObject());
    const head = `POST ${API}/nodes HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${body.length + 50}\r\n\r\n`;
    jobs.push(
      raw(port, head + body.slice(0, Math.floor(rand() * body.length)), {
        abortMs: Math.floor(rand() * 30),
        halfClose: rand() < 0.5,
      }),
    );
  }
  for (let i = 0; i < 100; i++) {
    const body = JSON.stringify(randomObject());
    const method = pick(['POST', 'PUT', 'PATCH', 'DELETE']);
    const path =
      method === 'POST' ? `${API}/nodes` : `${API}/nodes/storm-${Math.floor(rand() * 20)}${pick(['', '/status'])}`;
    const right = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    const type =
      rand() < 0.8
        ? right
        : pick(['application/json', 'application/merge-patch+json', 'application/yaml', 'text/plain']);
    jobs.push(
      srv
        .request(method, path, rand() < 0.1 ? bytes(200) : body, { 'content-type': type })
        .then((r) => statuses.push(r.status)),
    );
  }
  for (let i = 0; i < 30; i++) {
    jobs.push(
      openStream(srv.config, `${API}/nodes?watch=1&allowWatchBookmarks=${rand() < 0.5}`).then(async (w) => {
        await new Promise((r) => setTimeout(r, Math.floor(rand() * 100)));
        w.close();
      }),
    );
  }
  await Promise.all(jobs);
}

test(`a garbage storm leaves the server up and the store consistent (STORM_SEED=${seed})`, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-storm-'));
  const srv = await startServer({ insecure: true, dataDir, maxBodyBytes: 64 * 1024, watchHeartbeatMs: 20 });
  const tls = await startServer();
  try {
    const acked = new Map<string, string>();
    const writer = (async () => {
      for (let i = 0; i < 60; i++) {
        const name = `legit-${i % 15}`;
        const r =
          i < 15
            ? await srv.request('POST', `${API}/nodes`, {
                apiVersion: 'meshctl.dev/v1alpha1',
                kind: 'Node',
                metadata: { name },
                spec: { site: 'home' },
              })
            : await srv.request(
                'PATCH',
                `${API}/nodes/${name}`,
                { metadata: { labels: { i: String(i) } } },
                { 'content-type': 'application/merge-patch+json' },
              );
        assert.ok(r.status === 200 || r.status === 201, r.text);
        acked.set(name, r.json.metadata.resourceVersion);
      }
    })();
    const statuses: number[] = [];
    await Promise.all([writer, garbage(srv, Number(new URL(tls.url).port), Number(new URL(srv.url).port), statuses)]);
    if (process.env.STORM_VERBOSE)
      console.log(
        JSON.stringify(statuses.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {})),
      );
    assert.deepEqual(
      statuses.filter((s) => s >= 500),
      [],
      'no request got a 5xx',
    );
    assert.ok(
      statuses.some((s) => s >= 400 && s < 500) && statuses.some((s) => s < 300),
      'the storm was partly refused, partly served',
    );
    assert.equal((await srv.request('GET', '/healthz')).status, 200);
    assert.equal((await tls.request('GET', '/healthz')).status, 200);
    const served = (await srv.request('GET', `${API}/nodes`)).json.items as {
      metadata: { name: string; resourceVersion: string };
    }[];
    for (const [name, rv] of acked)
      assert.equal(served.find((o) => o.metadata.name === name)?.metadata.resourceVersion, rv, name);
    for (const o of served) assert.deepEqual(validateObject(o), [], o.metadata.name);
    await srv.stop();
    const reopened = await openStore({ dir: join(dataDir, 'store') });
    try {
      assert.deepEqual(reopened.list('nodes').items, served);
    } finally {
      await reopened.close();
    }
  } finally {
    await srv.stop();
    await tls.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
