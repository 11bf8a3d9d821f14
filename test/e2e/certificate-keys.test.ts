/**
 * No API response to a node or to the admin ever carries another node's private key. The real server and
 * store (in-process) with the mesh's access rules, the Certificate controller issuing one certificate to
 * node-a and one to node-b; then, as the admin, node-a and node-b: a watch of every kind held open while the
 * keys are issued, and afterwards every list (JSON and Table), every get, a replaying watch of every kind,
 * the discovery documents, `/metrics`, and every certificate's material and challenge endpoints. The only
 * response that may hold a key is a node's own material.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import { silentLogger } from '../../api/meta/logger.ts';
import { KINDS } from '../../api/v1alpha1/kinds.ts';
import { certificateMaterialPath, acmeChallengePath } from '../../api/wire/certificate-material.ts';
import { createCertificateController } from '../../controllers/certificate-controller.ts';
import { internalIssuer } from '../../controllers/certificate-issuers.ts';
import { createManager, type Manager } from '../../controllers/runtime/manager.ts';
import { eventually } from '../eventually.ts';
import { openStream, startServer, type EventStream, type TestServer } from '../harness.ts';

const PREFIX = '/apis/meshctl.dev/v1alpha1';
const WHO = { admin: undefined, 'node-a': 'Bearer tok-a', 'node-b': 'Bearer tok-b' } as const;
type Who = keyof typeof WHO;
const headers = (who: Who): Record<string, string> => (WHO[who] ? { authorization: WHO[who] } : {});

let server: TestServer;
let client: HttpClient;
let manager: Manager;
const early: { who: Who; stream: EventStream }[] = [];

before(async () => {
  server = await startServer({
    insecure: true,
    meshAccess: true,
    certificates: true,
    metrics: () => '# none\n',
    tokens: { 'tok-a': { kind: 'node', name: 'node-a' }, 'tok-b': { kind: 'node', name: 'node-b' } },
  });
  client = createClient(server.config);
  for (const who of Object.keys(WHO) as Who[]) {
    for (const k of KINDS)
      early.push({ who, stream: await openStream(server.config, `${PREFIX}/${k.plural}?watch=1`, headers(who)) });
  }
  manager = createManager({ client, logger: silentLogger, backoff: { baseMs: 20, maxMs: 200 } });
  const issuers = { internal: internalIssuer({ ca: server.ca }) };
  manager.add(createCertificateController({ manager, vault: server.certificates!.vault, issuers }));
  assert.equal(await manager.start(), true);
});

after(async () => {
  for (const e of early) e.stream.close();
  await manager?.stop();
  client?.close();
  await server?.stop();
});

/** The base64 body of a PEM private key (what would show up even re-encoded in JSON). */
const keyBody = (pem: string): string =>
  pem
    .replace(/-----[^-]+-----/g, '')
    .replace(/\s+/g, '')
    .slice(0, 60);

test("no response to a node or the admin carries another node's private key", async () => {
  for (const [name, node] of [
    ['site-a', 'node-a'],
    ['site-b', 'node-b'],
  ] as const) {
    await client.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: node } });
    await client.create('certificates', {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Certificate',
      metadata: { name },
      spec: { dnsNames: [`${name}.mesh.test`], node },
    });
  }
  const vault = server.certificates!.vault;
  const keys = await eventually(async () => {
    const a = vault.material('site-a')?.key;
    const b = vault.material('site-b')?.key;
    assert.ok(a && b, 'both keys issued');
    return { 'node-a': keyBody(a), 'node-b': keyBody(b) };
  });
  await eventually(async () => {
    for (const n of ['site-a', 'site-b']) {
      const c = await client.get('certificates', n);
      assert.equal(c.status?.conditions?.find((x) => x.type === 'Ready')?.status, 'True', `${n} Ready`);
    }
  });
  const seen: { who: Who; what: string; text: string }[] = [];
  const fetchAs = async (who: Who, path: string, extra: Record<string, string> = {}): Promise<void> => {
    const r = await server.request('GET', path, undefined, { ...headers(who), ...extra });
    seen.push({ who, what: `GET ${path} ${JSON.stringify(extra)} → ${r.status}`, text: r.text });
  };
  const table = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
  for (const who of Object.keys(WHO) as Who[]) {
    for (const path of ['/api', '/apis', `${PREFIX}`, '/version', '/metrics']) await fetchAs(who, path);
    for (const k of KINDS) {
      await fetchAs(who, `${PREFIX}/${k.plural}`);
      await fetchAs(who, `${PREFIX}/${k.plural}`, table);
      for (const o of (await client.list(k.plural)).items) {
        await fetchAs(who, `${PREFIX}/${k.plural}/${o.metadata.name}`);
        await fetchAs(who, `${PREFIX}/${k.plural}/${o.metadata.name}/status`);
      }
      const w = await openStream(server.config, `${PREFIX}/${k.plural}?watch=1&resourceVersion=0`, headers(who));
      // Wait for the replay of every object this identity may list (a refused watch is one Status line).
      const listed = await server.request('GET', `${PREFIX}/${k.plural}`, undefined, headers(who));
      const want = listed.status === 200 ? (listed.json as { items: unknown[] }).items.length : 1;
      if (want > 0) {
        await eventually(
          async () =>
            assert.ok(w.raw().split('\n').filter(Boolean).length >= want, `${who} watch ${k.plural}: ${w.raw()}`),
          { timeoutMs: 10_000 },
        );
      }
      w.close();
      seen.push({ who, what: `watch ${k.plural}`, text: w.raw() });
    }
    for (const n of ['site-a', 'site-b']) {
      await fetchAs(who, certificateMaterialPath(n));
      await fetchAs(who, acmeChallengePath(n, 'some-token'));
    }
  }
  for (const e of early) seen.push({ who: e.who, what: `early watch ${e.stream.status}`, text: e.stream.raw() });

  const own = seen.filter((s) => s.text.includes('PRIVATE KEY'));
  for (const s of seen) {
    for (const [node, body] of Object.entries(keys)) {
      if (s.who !== node) assert.ok(!s.text.includes(body), `${s.who} got ${node}'s key from ${s.what}`);
    }
  }
  assert.deepEqual(
    own.map((s) => `${s.who} ${s.what}`).sort(),
    [
      `node-a GET ${certificateMaterialPath('site-a')} {} → 200`,
      `node-b GET ${certificateMaterialPath('site-b')} {} → 200`,
    ],
    'a key appears only in a node’s own material',
  );
  assert.ok(seen.length > 100, `walked ${seen.length} responses`);
  const code = (who: Who, path: string): number | undefined =>
    Number(/→ (\d+)$/.exec(seen.find((s) => s.who === who && s.what.startsWith(`GET ${path} {}`))?.what ?? '')?.[1]);
  assert.deepEqual(
    [code('node-b', certificateMaterialPath('site-a')), code('admin', certificateMaterialPath('site-a'))],
    [403, 403],
  );
  assert.deepEqual(
    [
      code('node-a', acmeChallengePath('site-a', 'some-token')),
      code('node-b', acmeChallengePath('site-a', 'some-token')),
      code('admin', acmeChallengePath('site-a', 'some-token')),
    ],
    [404, 403, 403],
    'a challenge is for the certificate’s node only (404: none pending)',
  );
  assert.deepEqual([code('admin', '/metrics'), code('node-a', '/metrics')], [200, 403], '/metrics is the admin’s');
});
