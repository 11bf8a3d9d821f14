// Hostile and malformed input against the real mesh-control-plane process, as the admin and as a joined node:
// deep YAML and JSON, alias bombs, oversize bodies (declared and streamed), huge metadata, uid changes, bad
// durations, encoded path segments and bad tokens. Each is answered with a 4xx Status, round after round
// (the parsers warm), and the process is alive and serving afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import type { ClientConfig } from '../../api/client/types.ts';
import { httpRequest, openStream, spawnControlPlane, type ControlPlaneProcess, type HttpResult } from '../harness.ts';
import { eventually } from '../eventually.ts';
import { API, asNode, createToken, newNodeKey, postJoin } from './join-helpers.ts';

const ROUNDS = 4;
const YAML = { 'content-type': 'application/yaml' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const GV = 'meshctl.dev/v1alpha1';

let cp: ControlPlaneProcess;
let admin: ClientConfig;
let node: ClientConfig;

/** One hostile request: what to send, and the 4xx statuses it may be answered with. */
interface Probe {
  what: string;
  method: string;
  path: string;
  body?: string | Buffer | Record<string, unknown>;
  headers?: Record<string, string | null>;
  expect: number[];
}

const event = (extra: Record<string, unknown> = {}) => ({
  apiVersion: GV,
  kind: 'Event',
  metadata: { generateName: 'fz-', ...extra },
  involvedObject: { apiVersion: GV, kind: 'Node', name: 'fz' },
  type: 'Normal',
  reason: 'Fuzzed',
  message: 'x',
  count: 1,
});

function deepYaml(): Record<string, string> {
  const lines = Array.from({ length: 1200 }, (_, i) => `${' '.repeat(i)}a:`).join('\n');
  return {
    'flow 500': `a: ${'['.repeat(500)}${']'.repeat(500)}`,
    'flow 2000': `a: ${'['.repeat(2000)}${']'.repeat(2000)}`,
    'flow 100000 unclosed': `a: ${'{a: '.repeat(100_000)}`,
    'block 1200': lines,
    'compact sequences 2000': `a:\n${'- '.repeat(2000)}x`,
  };
}

const ALIAS_BOMB = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...'bcdefghi'.split('').map((c, i) => {
    const prev = 'abcdefghi'[i];
    return `${c}: &${c} [${Array(9).fill(`*${prev}`).join(',')}]`;
  }),
].join('\n');

/** The probes that parse a body, sent to `path` with `method` (a path this identity may write). */
function bodyProbes(method: string, path: string): Probe[] {
  const probes: Probe[] = Object.entries(deepYaml()).map(([what, body]) => ({
    what: `deep YAML (${what}) ${method} ${path}`,
    method,
    path,
    body,
    headers: YAML,
    expect: [400],
  }));
  for (const n of [500, 2000, 100_000]) {
    probes.push({
      what: `deep JSON ${n} ${method} ${path}`,
      method,
      path,
      body: `{"a":${'['.repeat(n)}${']'.repeat(n)}}`,
      expect: [400],
    });
  }
  probes.push(
    { what: `alias bomb ${method} ${path}`, method, path, body: ALIAS_BOMB, headers: YAML, expect: [400] },
    {
      what: `10 MB declared ${method} ${path}`,
      method,
      path,
      body: Buffer.alloc(10 * 1024 * 1024, 0x20),
      expect: [413],
    },
    {
      what: `2 MB YAML ${method} ${path}`,
      method,
      path,
      body: `a: "${'x'.repeat(2 * 1024 * 1024)}"`,
      headers: YAML,
      expect: [413],
    },
  );
  return probes;
}

/** Probes every identity may send: paths and tokens. */
function pathProbes(): Probe[] {
  const paths = [
    `${API}/modules/%2e%2e`,
    `${API}/modules/..`,
    `${API}/modules/%2E%2e`,
    `${API}/nodes/%2e`,
    `${API}/nodes/%2e%2e/status`,
    `${API}/%2e%2e/%2e%2e/version`,
  ];
  return [
    ...paths.map((path) => ({ what: `GET ${path}`, method: 'GET', path, expect: [400, 404] })),
    ...['Bearer x', `Bearer ${'a'.repeat(8000)}`, 'Basic Zm9vOmJhcg==', 'Bearer abcdef.0123456789abcdef'].map(
      (auth) => ({
        what: `token ${auth.slice(0, 20)}`,
        method: 'GET',
        path: `${API}/nodes`,
        headers: { authorization: auth },
        expect: [401],
      }),
    ),
  ];
}

/** Sends a probe with its path as it is (`httpRequest` would resolve `%2e%2e` before sending). */
function send(cfg: ClientConfig, p: Probe): Promise<HttpResult> {
  const body = typeof p.body === 'object' && !Buffer.isBuffer(p.body) ? JSON.stringify(p.body) : p.body;
  const headers: Record<string, string> = { authorization: `Bearer ${cfg.token}`, 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(p.headers ?? {})) if (v !== null) headers[k] = v;
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    let answered = false;
    const u = new URL(cfg.server);
    const req = httpsRequest(
      { method: p.method, hostname: u.hostname, port: u.port, path: p.path, ca: cfg.caData, agent: false, headers },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    // A server may answer before it reads the body (a node's 403 comes first): the answer counts, not the EPIPE.
    req.on('error', (e) => {
      if (!answered) reject(new Error(`${p.method} ${p.path}: ${e.message}`));
    });
    req.end(body);
  });
}

function assertStatus(p: Probe, r: HttpResult): void {
  assert.ok(
    p.expect.includes(r.status),
    `${p.what}: expected ${p.expect.join('/')}, got ${r.status} ${r.text.slice(0, 300)}`,
  );
  assert.equal(r.json?.kind, 'Status', `${p.what}: not a Status: ${r.text.slice(0, 300)}`);
  assert.ok(typeof r.json.reason === 'string' && r.json.reason !== '', `${p.what}: no reason`);
}

async function assertServing(): Promise<void> {
  assert.equal(cp.output().includes('FATAL'), false, cp.output().slice(-2000));
  const r = await httpRequest(admin, 'GET', `${API}/nodes`);
  assert.equal(r.status, 200, r.text);
  assert.equal((await httpRequest(node, 'GET', `${API}/nodes/fz`)).status, 200);
}

/** Sends a body of `bytes` in chunks without a Content-Length, resolving with the answer (never EPIPE). */
function streamBody(cfg: ClientConfig, path: string, bytes: number): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, cfg.server);
    const req = httpsRequest(
      {
        method: 'POST',
        hostname: u.hostname,
        port: u.port,
        path: u.pathname,
        ca: cfg.caData,
        agent: false,
        headers: {
          authorization: `Bearer ${cfg.token}`,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    req.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

before(async () => {
  cp = await spawnControlPlane({ timeoutMs: 60_000 });
  admin = cp.config;
  const { token } = await createToken(admin, { description: 'fuzz' });
  const joined = await postJoin(admin, { token, nodeName: 'fz', nodeKey: newNodeKey() });
  assert.equal(joined.status, 200, joined.text);
  node = asNode(admin, joined.json.credential as string);
});

after(async () => {
  await cp?.kill();
});

test('deep, aliased and oversize bodies are 4xx Status as admin and as a node; the process keeps serving', async () => {
  // A node is sent only to what it may write: a 403 comes before the body is read, and a sender still
  // writing a large body may then see the connection close before the answer.
  const nodeProbes = [...bodyProbes('POST', `${API}/events`), ...bodyProbes('PUT', `${API}/nodes/fz/status`)];
  const adminProbes = [...nodeProbes, ...bodyProbes('POST', `${API}/modules`)];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [who, cfg, probes] of [
      ['admin', admin, adminProbes],
      ['node', node, nodeProbes],
    ] as const) {
      for (const p of probes) assertStatus({ ...p, what: `${who} round ${round}: ${p.what}` }, await send(cfg, p));
    }
    await assertServing();
  }
});

test('a 10 MB chunked body is answered 413, not cut', async () => {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const cfg of [admin, node]) {
      const r = await streamBody(cfg, `${API}/events`, 10 * 1024 * 1024);
      assert.equal(r.status, 413);
      assert.equal(r.json.reason, 'RequestEntityTooLarge');
    }
  }
  await assertServing();
});

test('encoded path segments and bad tokens are 4xx Status, never a discovery document', async () => {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const cfg of [admin, node]) for (const p of pathProbes()) assertStatus(p, await send(cfg, p));
  }
  await assertServing();
});

/** Probes of metadata limits, uid changes and durations; `node` ones use what a node may write. */
async function objectProbes(who: 'admin' | 'node'): Promise<Probe[]> {
  const big = { annotations: { pad: 'x'.repeat(2_500_000) } };
  const patchUid = { metadata: { uid: '00000000-0000-0000-0000-000000000000' } };
  if (who === 'node') {
    return [
      { what: 'node: 2.5 MB annotation', method: 'POST', path: `${API}/events`, body: event(big), expect: [422] },
      {
        what: 'node: uid change by merge patch',
        method: 'PATCH',
        path: `${API}/nodes/fz/status`,
        body: patchUid,
        headers: MERGE,
        expect: [409],
      },
    ];
  }
  const stored = (await httpRequest(admin, 'GET', `${API}/nodes/fz`)).json;
  const nodeWith = (metadata: Record<string, unknown>) => ({ apiVersion: GV, kind: 'Node', metadata, spec: {} });
  const labels = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, 'v'.repeat(64)]));
  const mesh = (spec: Record<string, unknown>) => ({ apiVersion: GV, kind: 'Mesh', metadata: { name: 'mesh' }, spec });
  const probes: Probe[] = [
    {
      what: '2.5 MB annotation',
      method: 'POST',
      path: `${API}/nodes`,
      body: nodeWith({ name: 'n1', ...big }),
      expect: [422],
    },
    {
      what: '64-char label values',
      method: 'POST',
      path: `${API}/nodes`,
      body: nodeWith({ name: 'n2', labels }),
      expect: [422],
    },
    {
      what: '254-char label key prefix',
      method: 'POST',
      path: `${API}/nodes`,
      body: nodeWith({
        name: 'n3',
        labels: { [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}/k`]: 'v' },
      }),
      expect: [422],
    },
    {
      what: 'uid change by merge patch',
      method: 'PATCH',
      path: `${API}/nodes/fz`,
      body: patchUid,
      headers: MERGE,
      expect: [409],
    },
    {
      what: 'uid change by update',
      method: 'PUT',
      path: `${API}/nodes/fz`,
      body: { ...stored, metadata: { ...stored.metadata, uid: 'other' } },
      expect: [409],
    },
    ...['99999999999999999999h', '87601h'].map((ttl) => ({
      what: `JoinToken ttl ${ttl}`,
      method: 'POST',
      path: `${API}/jointokens`,
      body: { apiVersion: GV, kind: 'JoinToken', metadata: {}, spec: { ttl } },
      expect: [400, 422],
    })),
  ];
  for (const [field, value] of [
    ['heartbeatInterval', '0'],
    ['heartbeatInterval', '0s'],
    ['heartbeatInterval', '0.000h'],
    ['reachabilityGracePeriod', '0ms'],
  ]) {
    probes.push({
      what: `Mesh spec.${field} ${value}`,
      method: 'POST',
      path: `${API}/meshes`,
      body: mesh({ [field]: value }),
      expect: [422],
    });
  }
  return probes;
}

test('huge metadata, uid changes, zero durations and huge ttls are 4xx Status; nothing is stored', async () => {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const who of ['admin', 'node'] as const) {
      for (const p of await objectProbes(who)) {
        const r = await send(who === 'admin' ? admin : node, p);
        assertStatus({ ...p, what: `${who} round ${round}: ${p.what}` }, r);
        if (p.what.startsWith('Mesh')) {
          const fields = (r.json.details?.causes ?? []).map((c: { field?: string }) => c.field);
          assert.ok(
            fields.some((f: string) => /^spec\.(heartbeatInterval|reachabilityGracePeriod)$/.test(f)),
            r.text,
          );
        }
      }
    }
  }
  assert.equal((await httpRequest(admin, 'GET', `${API}/nodes/fz`)).json.metadata.uid.length > 30, true);
  for (const n of ['n1', 'n2', 'n3']) assert.equal((await httpRequest(admin, 'GET', `${API}/nodes/${n}`)).status, 404);
  await assertServing();
});

test('a watch with timeoutSeconds past the timer range stays open', async () => {
  const w = await openStream(admin, `${API}/events?watch=1&timeoutSeconds=2147484`);
  try {
    assert.equal(w.status, 200);
    const created = await httpRequest(admin, 'POST', `${API}/events`, event());
    assert.equal(created.status, 201, created.text);
    await eventually(
      async () => {
        const ev = await w.next(10_000);
        assert.ok(ev, 'the watch ended');
        assert.equal(ev.object.metadata.name, created.json.metadata.name);
      },
      { timeoutMs: 20_000 },
    );
  } finally {
    w.close();
  }
});
