import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureWireGuardKey, generateWireGuardKeyPair, publicKeyOf, wireGuardKeyPath } from './wireguard-key.ts';

const hasWg = ((): boolean => {
  try {
    execFileSync('wg', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

test('wireguard key: generated once (0600), kept across starts, the public key derived from the private one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-wgkey-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = await ensureWireGuardKey(dir);
  assert.equal(first.created, true);
  assert.equal(statSync(wireGuardKeyPath(dir)).mode & 0o777, 0o600);
  const again = await ensureWireGuardKey(dir);
  assert.deepEqual([again.created, again.privateKey, again.publicKey], [false, first.privateKey, first.publicKey]);
  assert.equal(publicKeyOf(first.privateKey), first.publicKey);
  assert.match(first.publicKey, /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$/);
});

test(
  "wireguard key: `wg pubkey` derives the same public key, and ours derives wg genkey's",
  { skip: !hasWg && process.env.CI !== 'true' && 'wg (wireguard-tools) is not installed' },
  () => {
    for (let i = 0; i < 5; i++) {
      const pair = generateWireGuardKeyPair();
      assert.equal(
        execFileSync('wg', ['pubkey'], { input: pair.privateKey + '\n' })
          .toString()
          .trim(),
        pair.publicKey,
      );
      const priv = execFileSync('wg', ['genkey']).toString().trim();
      assert.equal(
        publicKeyOf(priv),
        execFileSync('wg', ['pubkey'], { input: priv + '\n' })
          .toString()
          .trim(),
      );
    }
  },
);
