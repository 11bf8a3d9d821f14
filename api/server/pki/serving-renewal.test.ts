/**
 * The serving certificate is renewed while the server runs, and new TLS connections get the new one without a
 * restart: the real HTTPS listener, the real files under a temp data dir, time moved on a FakeClock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type PeerCertificate } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../meta/fake-clock.ts';
import { eventually } from '../../../test/eventually.ts';
import { listen } from '../listen.ts';
import { controlPlanePaths, ensureControlPlaneFiles, SERVING_RENEW_BEFORE_MS } from './first-start.ts';
import { certInfo, issueServingCert } from './pki.ts';

const H = 3_600_000;
const YEAR = 365 * 24 * H;
import { ServingRenewal } from './serving-renewal.ts';

/** The certificate a new TLS connection to the port is served (verified against the CA). */
function peer(port: number, ca: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const c = s.getPeerCertificate();
      s.end();
      resolve(c);
    });
    s.on('error', reject);
  });
}

test('the serving certificate is renewed 30 days before it expires and new connections get it at once', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-serving-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const files = await ensureControlPlaneFiles({ dataDir, listenHost: '127.0.0.1' });
  // The fake clock starts two hours ago, and the serving certificate is due for renewal one hour later (an
  // hour ago in real time): so what is renewed on the fake clock is valid in real time for the TLS check.
  const start = Date.now() - 2 * H;
  const serving = await issueServingCert({
    ca: files.ca,
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    nowMs: start - YEAR + SERVING_RENEW_BEFORE_MS + H,
    lifetimeMs: YEAR,
  });
  const app = { handle: (_q: unknown, res: { end: (s: string) => void }) => res.end('ok'), close: () => {} };
  const server = await listen({
    app,
    host: '127.0.0.1',
    port: 0,
    tls: { cert: serving.certPem, key: serving.keyPem },
  });
  t.after(() => server.close());
  const clock = new FakeClock({ start });
  const renewal = new ServingRenewal({
    dataDir,
    ca: files.ca,
    serving,
    lifetimeMs: YEAR,
    apply: (s) => server.setTls({ cert: s.certPem, key: s.keyPem }),
    clock,
  });
  renewal.start();
  t.after(() => renewal.stop());
  const firstNotAfter = renewal.notAfter();
  const before = await peer(server.port, files.ca.certPem);
  assert.equal(Date.parse(before.valid_to), firstNotAfter);

  clock.advance(firstNotAfter - SERVING_RENEW_BEFORE_MS - clock.now() - 60_000);
  assert.equal(renewal.notAfter(), firstNotAfter, 'not renewed a minute before it is due');
  clock.advance(60_000);
  await eventually(async () => assert.ok(renewal.notAfter() > firstNotAfter, 'renewed once due'), {
    timeoutMs: 20_000,
  });
  const after = await peer(server.port, files.ca.certPem);
  assert.notEqual(after.serialNumber, before.serialNumber, 'a new connection gets the new certificate');
  assert.equal(Date.parse(after.valid_to), renewal.notAfter());
  const onDisk = certInfo(readFileSync(controlPlanePaths(dataDir).cert, 'utf8'));
  assert.equal(onDisk.notAfter.getTime(), renewal.notAfter(), 'pki/server.crt holds the renewed certificate');
  assert.deepEqual(onDisk.ipAddresses, ['127.0.0.1']);
});

test("notAfter() is read without parsing the certificate again (the admin's /metrics reads it at every scrape)", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-serving-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const files = await ensureControlPlaneFiles({ dataDir, listenHost: '127.0.0.1' });
  const renewal = new ServingRenewal({ dataDir, ca: files.ca, serving: files.serving, apply: () => {} });
  const expected = certInfo(files.serving.certPem).notAfter.getTime();
  // Parsing costs milliseconds: 20,000 parses would take a minute; reading a kept value takes well under a second.
  const t0 = performance.now();
  for (let i = 0; i < 20_000; i++) assert.equal(renewal.notAfter(), expected);
  const ms = performance.now() - t0;
  assert.ok(ms < 1000, `20,000 notAfter() calls took ${ms.toFixed(0)} ms`);
});
