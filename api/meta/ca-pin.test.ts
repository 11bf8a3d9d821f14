import { test } from 'node:test';
import assert from 'node:assert/strict';
import { caPin } from './ca-pin.ts';

// A CA made with openssl; its pin computed the way kubeadm documents it:
// openssl x509 -pubkey -noout -in ca.crt | openssl pkey -pubin -outform der | sha256sum
const CA = `-----BEGIN CERTIFICATE-----
MIIBezCCASGgAwIBAgIUFHtRyyOE7HEQxf4qLmIgNzqspLUwCgYIKoZIzj0EAwIw
EjEQMA4GA1UEAwwHdGVzdC1jYTAgFw0yNjEyMDExNDUxMzNaGA8yMTI2MTEwNzE0
NTEzM1owEjEQMA4GA1UEAwwHdGVzdC1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH
A0IABP6cYECi47ras7nNQVJMvLYhD8l+RpIS3P2BepkW1g74feTR58k3JorqwXlb
YufqO6Ake6aYD43AltmUDsHN5zijUzBRMB0GA1UdDgQWBBTeppoYuyTvvzeVWF/J
7KfaepYq9TAfBgNVHSMEGDAWgBTeppoYuyTvvzeVWF/J7KfaepYq9TAPBgNVHRMB
Af8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQCNQjxSfpFc3kAM0R5aVcRtC8pm
QY7Z8GcSef5esK2ssAIgDcd99CCiwe108LagFwuODN3o7Zaq/fmip5Uy1m5fiqs=
-----END CERTIFICATE-----
`;

test("the CA pin is sha256 of the CA public key's DER SubjectPublicKeyInfo (kubeadm's discovery hash)", () => {
  assert.equal(caPin(CA), 'sha256:382e2f0368d6b2d3d1ce72ce50bb981f1d271a629b8fd625fe8ca136a18fa95a');
  assert.throws(() => caPin('not a certificate'));
});
