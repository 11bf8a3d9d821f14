import { test } from 'node:test';
import assert from 'node:assert/strict';
import { caPin } from '../api/meta/ca-pin.ts';
import { createCA } from '../api/server/pki/pki.ts';
import { tokenRow } from './token.ts';
import { renderCreated } from './token-create.ts';

test('token create: the CA pin of a CA the control plane made', async () => {
  const ca = await createCA({ commonName: 'test-ca' });
  assert.match(caPin(ca.certPem), /^sha256:[0-9a-f]{64}$/);
});

test('token create prints the join command, and says when the server address is loopback', () => {
  const c = {
    token: 'abcdef.0123456789abcdef',
    name: 'abcdef',
    expiresAt: '2026-01-02T03:04:05Z',
    server: 'https://10.0.0.1:6443',
    caHash: 'sha256:00',
    joinCommand: 'mesh-agent join --server https://10.0.0.1:6443 --token abcdef.0123456789abcdef --ca-hash sha256:00',
  };
  const text = renderCreated(c);
  assert.match(text, /^jointoken\/abcdef created: it expires at 2026-01-02T03:04:05Z and can be used once\.\n/);
  assert.match(
    text,
    /\n {2}mesh-agent join --server https:\/\/10\.0\.0\.1:6443 --token abcdef\.0123456789abcdef --ca-hash sha256:00\n/,
  );
  assert.doesNotMatch(text, /loopback/);
  assert.match(renderCreated({ ...c, server: 'https://127.0.0.1:6443' }), /is this machine's loopback address/);
});

test('token list rows: expiry in words, used by whom, description', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const t = (status: Record<string, unknown>, description?: string) => ({
    apiVersion: 'meshctl.dev/v1alpha1' as const,
    kind: 'JoinToken' as const,
    metadata: { name: 'abcdef' },
    spec: { ttl: '24h', ...(description ? { description } : {}) },
    status,
  });
  assert.deepEqual(tokenRow(t({ expiresAt: '2026-01-02T00:00:00Z', used: false }, 'office'), now), [
    'abcdef',
    'in 24h',
    'no',
    'office',
  ]);
  assert.deepEqual(tokenRow(t({ expiresAt: '2025-12-31T00:00:00Z', used: true, usedBy: 'node-a' }), now), [
    'abcdef',
    'expired',
    'yes (node-a)',
    '',
  ]);
  assert.deepEqual(tokenRow(t({}), now), ['abcdef', '<unknown>', 'no', '']);
});
