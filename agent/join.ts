/**
 * `mesh-agent join`: makes this machine a node of a mesh, kubeadm-style, and stores what it needs to run.
 *
 *   1. Create the state directory 0700 when it is missing (as `meshctl init` does), open the agent's store (refusing a state directory of another node or root, or one in use) and load
 *      or generate the node key (node-key.ts).
 *   2. Fetch `/cluster-info` WITHOUT verifying the server, hash the CA's public key and compare it with
 *      `--ca-hash`: on a mismatch stop here, before the token is sent.
 *   3. `POST /join` verifying the server against that CA: the token, the node name, site and public key.
 *   4. Save the identity — server, CA and the node credential the control plane returned — in the agent's
 *      store (files 0600), so `mesh-agent run --state-dir DIR` needs nothing else.
 */
import { mkdir } from 'node:fs/promises';
import { caPin } from '../api/meta/ca-pin.ts';
import type { Logger } from '../api/meta/logger.ts';
import { resolveIdentity } from './identity.ts';
import { JoinError, joinRequest } from './join-http.ts';
import { ensureNodeKey } from './node-key.ts';
import { openAgentStore, type AgentStore } from './store/agent-store.ts';

/** What `joinMesh` needs. */
export interface JoinMeshOptions {
  server: string;
  token: string;
  /** `sha256:<hex>` of the CA's SubjectPublicKeyInfo. */
  caHash: string;
  nodeName: string;
  site?: string;
  stateDir: string;
  root?: string;
  logger: Logger;
  timeoutMs?: number;
}

/** The outcome of a join. */
export interface Joined {
  nodeName: string;
  server: string;
}

const TOKEN = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;
const PIN = /^sha256:[0-9a-f]{64}$/;

/** Joins the mesh and stores the credential (see the module comment); throws JoinError (or Error) with a readable message. */
export async function joinMesh(opts: JoinMeshOptions): Promise<Joined> {
  const server = checkInputs(opts);
  let store: AgentStore;
  await mkdir(opts.stateDir, { recursive: true, mode: 0o700 });
  try {
    store = await openAgentStore({ stateDir: opts.stateDir, logger: opts.logger });
  } catch (e) {
    throw new JoinError(
      `${(e as Error).message}; is mesh-agent already running with --state-dir ${opts.stateDir}? Stop it before joining`,
    );
  }
  try {
    const input = { nodeName: opts.nodeName, site: opts.site, ...(opts.root !== undefined ? { root: opts.root } : {}) };
    const { identity } = resolveIdentity(store.identity(), { ...input, connection: { server } }, opts.stateDir);
    const key = await ensureNodeKey(opts.stateDir);
    if (key.created) opts.logger.info('Generated node key', { node: opts.nodeName, stateDir: opts.stateDir });
    const ca = await fetchPinnedCa(server, opts.caHash.toLowerCase(), opts.timeoutMs);
    opts.logger.info('Verified control plane CA', { server, caHash: opts.caHash });
    const credential = await postJoin({
      server,
      ca,
      token: opts.token,
      nodeName: identity.nodeName,
      site: identity.site,
      nodeKey: key.publicKey,
      timeoutMs: opts.timeoutMs,
    });
    await store.saveIdentity({ ...identity, caData: ca, token: credential });
    opts.logger.info('Joined mesh', { node: identity.nodeName, server, site: identity.site });
    return { nodeName: identity.nodeName, server };
  } finally {
    await store.close();
  }
}

/** Checks the flags' shapes before anything is done; returns the server URL without a trailing slash. */
function checkInputs(opts: JoinMeshOptions): string {
  let url: URL;
  try {
    url = new URL(opts.server);
  } catch {
    throw new JoinError(`--server must be a URL such as https://10.0.0.1:6443, not "${opts.server}"`);
  }
  if (url.protocol !== 'https:')
    throw new JoinError(`--server must be an https:// URL (the CA pin is checked over TLS), not "${opts.server}"`);
  if (!TOKEN.test(opts.token))
    throw new JoinError(
      '--token must look like abcdef.0123456789abcdef ([a-z0-9]{6}.[a-z0-9]{16}), as `meshctl token create` prints it',
    );
  if (!PIN.test(opts.caHash.toLowerCase()))
    throw new JoinError(
      `--ca-hash must be sha256:<64 hex digits>, as \`meshctl token create\` prints it, not "${opts.caHash}"`,
    );
  return url.origin;
}

async function fetchPinnedCa(server: string, pin: string, timeoutMs: number | undefined): Promise<string> {
  const res = await joinRequest({ server, method: 'GET', path: '/cluster-info', ...(timeoutMs ? { timeoutMs } : {}) });
  const ca = (res.json as { ca?: unknown } | undefined)?.ca;
  if (res.status !== 200 || typeof ca !== 'string') {
    throw new JoinError(
      `${server}/cluster-info answered HTTP ${res.status} without a CA; is this a meshctl control plane?`,
    );
  }
  let actual: string;
  try {
    actual = caPin(ca);
  } catch (e) {
    throw new JoinError(`${server}/cluster-info returned a CA that cannot be read (${(e as Error).message})`);
  }
  if (actual !== pin) {
    throw new JoinError(
      `the control plane at ${server} presents a CA whose public key hash is ${actual}, but --ca-hash is ${pin}: ` +
        'refusing to send the join token. Check that --server is the right control plane and copy the command from `meshctl token create` again.',
    );
  }
  return ca;
}

interface JoinCall {
  server: string;
  ca: string;
  token: string;
  nodeName: string;
  site?: string;
  nodeKey: string;
  timeoutMs?: number;
}

async function postJoin(c: JoinCall): Promise<string> {
  const body = { token: c.token, nodeName: c.nodeName, nodeKey: c.nodeKey, ...(c.site ? { site: c.site } : {}) };
  const res = await joinRequest({
    server: c.server,
    method: 'POST',
    path: '/join',
    body,
    ca: c.ca,
    ...(c.timeoutMs ? { timeoutMs: c.timeoutMs } : {}),
  });
  const json = res.json as { credential?: unknown; message?: unknown; reason?: unknown } | undefined;
  if (res.status === 200 && typeof json?.credential === 'string') return json.credential;
  const why = typeof json?.message === 'string' ? json.message : `HTTP ${res.status}`;
  throw new JoinError(
    `the control plane refused the join (${typeof json?.reason === 'string' ? json.reason : res.status}): ${why}`,
  );
}
