import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { bearerAuthenticator, hashToken, unpooledHexBytes, type Identity } from './auth.ts';

/** A request on `socket` carrying `Authorization: <header>`. */
function request(socket: Socket, header?: string): IncomingMessage {
  const req = new IncomingMessage(socket);
  if (header !== undefined) req.headers.authorization = header;
  return req;
}

/** An authenticator over one admin token and a table of node credentials, counting how often it hashes. */
function setup(adminToken: { value: string }) {
  const nodes = new Map<string, Identity>([[hashToken('node-a-token'), { kind: 'node', name: 'a' }]]);
  let hashes = 0;
  const authenticate = bearerAuthenticator({
    adminTokenSha256: () => hashToken(adminToken.value),
    resolve: (sha) => nodes.get(sha),
    hash: (token) => {
      hashes++;
      return hashToken(token);
    },
  });
  return { authenticate, nodes, hashes: () => hashes };
}

test('a kept connection presenting the same token is hashed once, and still resolved on every request', () => {
  const { authenticate, hashes } = setup({ value: 'admin-token' });
  const socket = new Socket();
  for (let i = 0; i < 3; i++)
    assert.deepEqual(authenticate(request(socket, 'Bearer node-a-token')), { kind: 'node', name: 'a' });
  assert.equal(hashes(), 1);
  assert.deepEqual(authenticate(request(new Socket(), 'Bearer node-a-token')), { kind: 'node', name: 'a' });
  assert.equal(hashes(), 2, 'another connection hashes its own token');
});

test('another header on the same connection is hashed again and authenticates as what it carries', () => {
  const { authenticate, hashes } = setup({ value: 'admin-token' });
  const socket = new Socket();
  assert.deepEqual(authenticate(request(socket, 'Bearer node-a-token')), { kind: 'node', name: 'a' });
  assert.deepEqual(authenticate(request(socket, 'Bearer admin-token')), { kind: 'admin' });
  assert.equal(authenticate(request(socket, 'Bearer wrong')), undefined);
  assert.equal(authenticate(request(socket)), undefined, 'no header after a valid one is no identity');
  assert.equal(authenticate(request(socket, 'Basic node-a-token')), undefined);
  assert.equal(hashes(), 3);
});

test('a revoked credential or a rotated admin token is refused at once on a kept connection', () => {
  const admin = { value: 'admin-token' };
  const { authenticate, nodes } = setup(admin);
  const socket = new Socket();
  const adminSocket = new Socket();
  assert.deepEqual(authenticate(request(socket, 'Bearer node-a-token')), { kind: 'node', name: 'a' });
  assert.deepEqual(authenticate(request(adminSocket, 'Bearer admin-token')), { kind: 'admin' });
  nodes.clear();
  admin.value = 'rotated-admin-token';
  assert.equal(authenticate(request(socket, 'Bearer node-a-token')), undefined);
  assert.equal(authenticate(request(adminSocket, 'Bearer admin-token')), undefined);
  assert.deepEqual(authenticate(request(adminSocket, 'Bearer rotated-admin-token')), { kind: 'admin' });
});

test('the bytes kept per connection are a buffer of their own, not a slice that keeps a pool slab alive', () => {
  const hex = 'ab'.repeat(32);
  const bytes = unpooledHexBytes(hex);
  assert.equal(bytes.toString('hex'), hex);
  assert.equal(bytes.buffer.byteLength, 32);
  assert.ok(Buffer.from(hex, 'hex').buffer.byteLength > 32, 'Buffer.from slices the pool (what this avoids)');
});
