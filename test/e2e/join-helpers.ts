/**
 * Helpers of the join e2e tests (test/e2e/join-*.test.ts): node keys, join tokens and joins through the
 * real API, and running `mesh-agent join` as a real process (waiting for its ready line, or its exit).
 */
import { generateKeyPairSync } from 'node:crypto';
import type { ClientConfig } from '../../api/client/types.ts';
import { spawnAgentCommand as spawnAgentWith, type AgentProcess } from '../../agent/testing.ts';
import { httpRequest, type HttpResult } from '../harness.ts';

export const API = '/apis/meshctl.dev/v1alpha1';

/** A fresh node public key as the join request carries it (base64 SPKI DER), Ed25519 unless `type` says otherwise. */
export function newNodeKey(type: 'ed25519' | 'p256' | 'rsa' = 'ed25519'): string {
  const pair =
    type === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : type === 'p256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('rsa', { modulusLength: 1024 });
  return pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
}

/** Creates a JoinToken as admin; resolves with the token from the response header and the created object. */
export async function createToken(
  admin: ClientConfig,
  spec: Record<string, unknown> = {},
  name?: string,
): Promise<{ token: string; res: HttpResult }> {
  const res = await httpRequest(admin, 'POST', `${API}/jointokens`, {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'JoinToken',
    metadata: name ? { name } : {},
    spec,
  });
  if (res.status !== 201) throw new Error(`creating a JoinToken failed: ${res.status} ${res.text}`);
  return { token: String(res.headers['x-meshctl-join-token'] ?? ''), res };
}

/** `POST /join` without credentials. */
export function postJoin(cfg: ClientConfig, body: Record<string, unknown>): Promise<HttpResult> {
  return httpRequest({ ...cfg, token: undefined }, 'POST', '/join', body);
}

/** A client config that uses a node credential instead of the admin token. */
export function asNode(cfg: ClientConfig, credential: string): ClientConfig {
  return { ...cfg, token: credential };
}

/** `mesh-agent <command> …` through tsx, waiting for "Started agent" (join then runs; joins take longer). */
export function spawnAgentCommand(args: string[], timeoutMs = 30_000): Promise<AgentProcess> {
  return spawnAgentWith(args, timeoutMs);
}
