/**
 * The node's WireGuard key pair: X25519 with Node's `crypto`, generated on the agent's first start and kept
 * in `<state-dir>/wireguard.key` (the raw 32-byte private key in base64, as `wg genkey` writes it; mode
 * 0600). The private key never leaves the node: the WireGuard driver hands it to `wg` on stdin, and only the
 * public key goes into Node.status.overlay. `wg pubkey` derives the same public key (a test checks it).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../api/meta/atomic-file.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** A WireGuard key pair, both halves base64 of the raw 32 bytes. */
export interface WireGuardKeyPair {
  privateKey: string;
  publicKey: string;
}

/** PKCS#8 DER prefix of a raw X25519 private key (Node 20 cannot import a JWK private key without `x`). */
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

/** The path of the WireGuard private key in a state directory. */
export function wireGuardKeyPath(stateDir: string): string {
  return join(stateDir, 'wireguard.key');
}

/** The public key of a raw base64 X25519 private key; throws when it is not 32 bytes. */
export function publicKeyOf(privateKey: string): string {
  const raw = Buffer.from(privateKey.trim(), 'base64');
  if (raw.length !== 32) throw new Error('a WireGuard private key is 32 bytes in base64');
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_X25519_PREFIX, raw]), format: 'der', type: 'pkcs8' });
  return createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');
}

/** A new key pair (OpenSSL clamps the private key, as `wg genkey` does). */
export function generateWireGuardKeyPair(): WireGuardKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return {
    privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32).toString('base64'),
    publicKey: publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64'),
  };
}

/** Loads the key pair of `stateDir`, generating it (0600) when there is none yet. */
export async function ensureWireGuardKey(stateDir: string): Promise<WireGuardKeyPair & { created: boolean }> {
  const path = wireGuardKeyPath(stateDir);
  let text: string | undefined;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT') throw new Error(`cannot read the WireGuard key ${path}: ${(e as Error).message}`);
  }
  if (text !== undefined) {
    try {
      await chmod(path, 0o600);
      return { privateKey: text.trim(), publicKey: publicKeyOf(text), created: false };
    } catch (e) {
      throw new Error(`the WireGuard key ${path} is unusable: ${(e as Error).message}`);
    }
  }
  const pair = generateWireGuardKeyPair();
  await writeFileAtomic(path, pair.privateKey + '\n', { mode: 0o600 });
  return { ...pair, created: true };
}
