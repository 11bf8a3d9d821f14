/**
 * Helpers of the join e2e tests (test/e2e/join-*.test.ts): node keys, join tokens and joins through the
 * real API, and running `mesh-agent join` as a real process (waiting for its ready line, or its exit).
 */
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import type { ClientConfig } from '../../api/client/types.ts';
import { waitFor, type AgentProcess } from '../../agent/testing.ts';
import { REPO_ROOT, httpRequest, type HttpResult } from '../harness.ts';

export const API = '/apis/meshctl.dev/v1alpha1';

/** A fresh node public key as the join request carries it (base64 SPKI DER), Ed25519 unless `type` says otherwise. */
export function newNodeKey(type: 'ed25519' | 'p256' | 'rsa' = 'ed25519'): string {
  const pair = type === 'ed25519' ? generateKeyPairSync('ed25519')
    : type === 'p256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 1024 });
  return pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
}

/** Creates a JoinToken as admin; resolves with the token from the response header and the created object. */
export async function createToken(admin: ClientConfig, spec: Record<string, unknown> = {}, name?: string): Promise<{ token: string; res: HttpResult }> {
  const res = await httpRequest(admin, 'POST', `${API}/jointokens`, {
    apiVersion: 'meshctl.dev/v1alpha1', kind: 'JoinToken', metadata: name ? { name } : {}, spec,
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

/** Spawns `mesh-agent <args>` (through tsx) and waits for "Started agent" (the first argument is the command: join or run). */
export async function spawnAgentCommand(args: string[], timeoutMs = 30_000): Promise<AgentProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'agent/main.ts', ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
  child.stderr.setEncoding('utf8').on('data', (d: string) => { out += d; });
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, sig) => resolve(code ?? sig)));
  let done = false;
  void exited.then(() => { done = true; });
  const lines = (): Array<Record<string, unknown>> => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<number | string | null> => {
    if (!done) child.kill(signal);
    return exited;
  };
  const ready = await waitFor(() => lines().find((l) => l.msg === 'Started agent') ?? (done ? 'exited' : undefined), timeoutMs, 'Started agent')
    .catch(async (e: unknown) => { await kill(); throw new Error(`${(e as Error).message}\n${out}`); });
  if (ready === 'exited') throw new Error(`mesh-agent ${args[0]} exited before it started:\n${out}`);
  return { pid: child.pid!, metrics: String(ready.metrics ?? ''), output: () => out, lines, exited, kill };
}
