/**
 * The Certificate controller with the `internal` issuer against the real API server and store (in-process,
 * port 0), through the real HTTP client and controller manager, on a FakeClock: a Certificate becomes Ready,
 * its chain verifies against the mesh CA, only its node gets the material, it is renewed exactly when its
 * renewal time is reached, and a failed attempt is Ready=False with a Warning Event at once, retried with backoff.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { silentLogger, createJsonLogger } from '../api/meta/logger.ts';
import { FakeClock } from '../api/meta/fake-clock.ts';
import type { Certificate, Event } from '../api/v1alpha1/generated/index.ts';
import { certificateMaterialPath, parseCertificateMaterial } from '../api/wire/certificate-material.ts';
import { serverSuite } from '../test/server-suite.ts';
import { eventually } from '../test/eventually.ts';
import { createManager } from './runtime/manager.ts';
import { createCertificateController } from './certificate-controller.ts';
import { internalIssuer } from './certificate-issuers.ts';

const H = 3_600_000;
const suite = serverSuite({
  insecure: true,
  meshAccess: true,
  certificates: true,
  tokens: { 'tok-a': { kind: 'node', name: 'node-a' }, 'tok-b': { kind: 'node', name: 'node-b' } },
});

/** A running Certificate controller with an internal issuer of 3 h certificates, on a fake clock. */
async function startController(t: TestContext): Promise<FakeClock> {
  const clock = new FakeClock({ start: Date.now() });
  const manager = createManager({
    client: suite.client,
    logger: process.env.DBG ? createJsonLogger() : silentLogger,
    backoff: { baseMs: 20, maxMs: 200 },
  });
  const vault = suite.server.certificates!.vault;
  const issuers = { internal: internalIssuer({ ca: suite.server.ca, lifetimeMs: 3 * H, clock }) };
  manager.add(createCertificateController({ manager, clock, vault, issuers, retry: { baseMs: 60_000, maxMs: H } }));
  assert.equal(await manager.start(), true);
  t.after(() => manager.stop());
  return clock;
}

const certificate = (name: string, node: string, issuer?: 'acme' | 'internal'): Certificate => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Certificate',
  metadata: { name },
  spec: { dnsNames: [`${name}.mesh.test`], node, ...(issuer ? { issuer } : {}) },
});

const get = async (name: string): Promise<Certificate> => suite.client.get('certificates', name);

/** Waits until the Certificate's Ready condition has `status` (and `check` holds); returns the Certificate. */
function waitReady(
  name: string,
  status: string,
  check: (c: Certificate) => boolean = () => true,
): Promise<Certificate> {
  return eventually(
    async () => {
      const c = await get(name);
      const ready = c.status?.conditions?.find((x) => x.type === 'Ready');
      assert.equal(ready?.status, status, `${name} Ready: ${JSON.stringify(c.status)}`);
      assert.ok(check(c), `${name}: ${JSON.stringify(c.status)}`);
      return c;
    },
    { timeoutMs: 30_000 },
  );
}

const eventsOf = async (name: string): Promise<Event[]> =>
  (await suite.client.list('events')).items.filter((e) => e.involvedObject.name === name);

test('a Certificate becomes Ready, chains to the mesh CA, and its material goes to its node only, and is deleted with it', async (t) => {
  await startController(t);
  const vault = suite.server.certificates!.vault;
  await suite.client.create('certificates', certificate('web', 'node-a'));
  const c = await waitReady('web', 'True');
  assert.equal(c.status?.failedAttempts, 0);
  const res = await suite.server.request('GET', certificateMaterialPath('web'), undefined, {
    authorization: 'Bearer tok-a',
  });
  assert.equal(res.status, 200, res.text);
  const m = parseCertificateMaterial(JSON.parse(res.text));
  const leaf = new X509Certificate(m.cert);
  const ca = new X509Certificate(suite.server.ca.certPem);
  assert.ok(leaf.checkIssued(ca) && leaf.verify(ca.publicKey), 'the leaf is signed by the mesh CA');
  assert.equal(leaf.subjectAltName, 'DNS:web.mesh.test');
  assert.equal(new Date(leaf.validTo).toISOString().replace('.000', ''), c.status?.notAfter);
  assert.equal(m.notAfter, c.status?.notAfter);
  assert.equal(m.ca, suite.server.ca.certPem);
  assert.ok(leaf.checkPrivateKey((await import('node:crypto')).createPrivateKey(m.key)), 'the key matches the leaf');
  for (const [who, auth] of [
    ['node-b', 'Bearer tok-b'],
    ['admin', undefined],
  ] as const) {
    const r = await suite.server.request(
      'GET',
      certificateMaterialPath('web'),
      undefined,
      auth ? { authorization: auth } : {},
    );
    assert.equal(r.status, 403, `${who}: ${r.text}`);
    assert.ok(!r.text.includes('PRIVATE KEY'), `${who} got no key`);
  }
  await suite.client.delete('certificates', 'web');
  await eventually(async () =>
    assert.equal(vault.material('web'), undefined, 'the key is deleted with its Certificate'),
  );
  const missing = await suite.server.request('GET', certificateMaterialPath('nope'), undefined, {
    authorization: 'Bearer tok-a',
  });
  assert.equal(missing.status, 404);
});

test('renewal happens when the renewal time (a third of the lifetime) is reached, not before', async (t) => {
  const clock = await startController(t);
  await suite.client.create('certificates', certificate('renew', 'node-a'));
  const first = await waitReady('renew', 'True');
  const notAfter = Date.parse(first.status!.notAfter!);
  const renewalTime = Date.parse(first.status!.renewalTime!);
  const lifetime = notAfter - Date.parse(first.status!.notBefore!);
  assert.ok(
    Math.abs(renewalTime - (notAfter - lifetime / 3)) <= 1000,
    'renewalTime is notAfter minus a third of the lifetime',
  );
  clock.advance(renewalTime - clock.now() - 1000);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await get('renew')).status?.notAfter, first.status?.notAfter, 'not renewed before its time');
  clock.advance(2000);
  const second = await waitReady('renew', 'True', (c) => c.status?.notAfter !== first.status?.notAfter);
  assert.ok(Date.parse(second.status!.notAfter!) > notAfter, 'the renewed certificate ends later');
  await eventually(async () => {
    const issued = (await eventsOf('renew')).filter((e) => e.reason === 'Issued');
    assert.equal(issued.length, 2, JSON.stringify(issued));
    assert.match(issued.map((e) => e.message).join('\n'), /RenewalDue/);
  });
});

test('a failed attempt is Ready=False with the reason and a Warning Event at once, then retried with backoff', async (t) => {
  const clock = await startController(t);
  await suite.client.create('certificates', certificate('noacme', 'node-a', 'acme'));
  const failed = await waitReady('noacme', 'False', (c) => c.status?.failedAttempts === 1);
  assert.equal(failed.status?.conditions?.find((x) => x.type === 'Ready')?.reason, 'IssuerNotConfigured');
  assert.match(failed.status?.lastFailure?.message ?? '', /no acme issuer/);
  const warnings = await eventually(async () => {
    const w = (await eventsOf('noacme')).filter((e) => e.type === 'Warning');
    assert.equal(w.length, 1, JSON.stringify(w));
    return w;
  });
  assert.equal(warnings[0]?.reason, 'IssuerNotConfigured');
  clock.advance(59_000);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await get('noacme')).status?.failedAttempts, 1, 'no retry before the backoff');
  clock.advance(1_000);
  await waitReady('noacme', 'False', (c) => c.status?.failedAttempts === 2);
  clock.advance(119_000);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await get('noacme')).status?.failedAttempts, 2, 'the second backoff is twice the first');
  clock.advance(1_000);
  await waitReady('noacme', 'False', (c) => c.status?.failedAttempts === 3);
});
