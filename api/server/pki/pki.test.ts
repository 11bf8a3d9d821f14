import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createHash } from 'node:crypto';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { caPin } from '../../meta/ca-pin.ts';
import { certInfo, createCA, issueServingCert, signedBy } from './pki.ts';

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

test('the CA pin of a CA made here is sha256 of the DER SubjectPublicKeyInfo (kubeadm-style pin)', async () => {
  const ca = await createCA({ commonName: 'test-ca' });
  const spki = new X509Certificate(ca.certPem).publicKey.export({ type: 'spki', format: 'der' });
  assert.equal(caPin(ca.certPem), `sha256:${createHash('sha256').update(spki).digest('hex')}`);
  assert.notEqual(caPin(ca.certPem), caPin((await createCA({ commonName: 'test-ca' })).certPem));
});
