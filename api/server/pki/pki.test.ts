import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createHash } from 'node:crypto';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { caPin } from '../../meta/ca-pin.ts';
import { certInfo, createCA, issueServingCert, signedBy, subjectAltNames } from './pki.ts';

/** Serves `cert` on 127.0.0.1 and returns the outcome of a verifying handshake (checked against `servername`, else the IP). */
async function handshake(
  cert: { certPem: string; keyPem: string },
  caPem: string,
  servername?: string,
): Promise<string> {
  const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (s) => s.end('hi'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    return await new Promise<string>((resolve) => {
      const sock: TLSSocket = connect({ host: '127.0.0.1', port, ca: caPem, ...(servername ? { servername } : {}) });
      sock.once('secureConnect', () => {
        resolve('ok');
        sock.destroy();
      });
      sock.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
  } finally {
    server.close();
  }
}

test('a serving certificate issued by the CA verifies in a real TLS handshake, by DNS name and by IP', async () => {
  const ca = await createCA({ commonName: 'test-ca' });
  const serving = await issueServingCert({
    ca,
    dnsNames: ['localhost', 'cp.example'],
    ipAddresses: ['127.0.0.1', '::1'],
    days: 30,
  });
  assert.equal(await handshake(serving, ca.certPem, 'localhost'), 'ok');
  assert.equal(await handshake(serving, ca.certPem, 'cp.example'), 'ok');
  assert.equal(await handshake(serving, ca.certPem), 'ok');
  assert.equal(await handshake(serving, ca.certPem, 'other.example'), 'ERR_TLS_CERT_ALTNAME_INVALID');
  const otherCa = await createCA({ commonName: 'other-ca' });
  assert.equal(await handshake(serving, otherCa.certPem, 'localhost'), 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
});

test('certificates carry the requested SANs, validity and CA flags', async () => {
  const ca = await createCA({ commonName: 'test-ca' });
  const serving = await issueServingCert({
    ca,
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1', '0:0:0:0:0:0:0:1'],
    days: 10,
  });
  const info = certInfo(serving.certPem);
  assert.deepEqual(info.dnsNames, ['localhost']);
  assert.deepEqual(info.ipAddresses, ['127.0.0.1', '::1']);
  const days = (info.notAfter.getTime() - Date.now()) / 86_400_000;
  assert.ok(days > 9.9 && days <= 10.01, `validity ${days} days`);
  const node = new X509Certificate(serving.certPem);
  assert.equal(node.ca, false);
  assert.equal(new X509Certificate(ca.certPem).ca, true);
  assert.ok(node.verify(new X509Certificate(ca.certPem).publicKey));
  assert.equal(await signedBy(serving.certPem, ca.certPem), true);
  assert.equal(await signedBy(serving.certPem, (await createCA({ commonName: 'x' })).certPem), false);
  assert.match(serving.keyPem, /^-----BEGIN PRIVATE KEY-----\n/);
});

test('certInfo reads the exact validity the certificate was issued with (node:crypto, second precision)', async () => {
  const ca = await createCA({ commonName: 'test-ca' });
  const nowMs = Date.parse('2031-06-05T04:03:02.000Z');
  const serving = await issueServingCert({
    ca,
    dnsNames: ['a.example'],
    ipAddresses: [],
    nowMs,
    lifetimeMs: 3_600_000,
  });
  const info = certInfo(serving.certPem);
  assert.equal(info.notBefore.toISOString(), '2031-06-05T03:58:02.000Z', 'back-dated five minutes');
  assert.equal(info.notAfter.toISOString(), '2031-06-05T05:03:02.000Z');
  assert.equal(await signedBy('not a certificate', ca.certPem), false);
});

test("subjectAltNames reads node:crypto's text, quoted values and IPv6 included", () => {
  assert.deepEqual(subjectAltNames(''), []);
  assert.deepEqual(subjectAltNames('DNS:a.example, IP Address:127.0.0.1, IP Address:FE80:0:0:0:0:0:0:1'), [
    { type: 'DNS', value: 'a.example' },
    { type: 'IP Address', value: '127.0.0.1' },
    { type: 'IP Address', value: 'FE80:0:0:0:0:0:0:1' },
  ]);
  assert.deepEqual(subjectAltNames('DNS:"a, b", DNS:"q\\"x", DNS:c'), [
    { type: 'DNS', value: 'a, b' },
    { type: 'DNS', value: 'q"x' },
    { type: 'DNS', value: 'c' },
  ]);
  assert.throws(() => subjectAltNames('garbage'), /unreadable subjectAltName/);
});

test('the CA pin of a CA made here is sha256 of the DER SubjectPublicKeyInfo (kubeadm-style pin)', async () => {
  const ca = await createCA({ commonName: 'test-ca' });
  const spki = new X509Certificate(ca.certPem).publicKey.export({ type: 'spki', format: 'der' });
  assert.equal(caPin(ca.certPem), `sha256:${createHash('sha256').update(spki).digest('hex')}`);
  assert.notEqual(caPin(ca.certPem), caPin((await createCA({ commonName: 'test-ca' })).certPem));
});
