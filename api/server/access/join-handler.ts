/**
 * `POST /join`: a machine joins the mesh. No bearer token: the join token in the body is the credential.
 * Body `{ token, nodeName, site?, nodeKey }` (nodeKey: the node's public key, base64 SPKI DER, Ed25519 or
 * P-256, generated and kept by the agent) → 200 `{ nodeName, credential }`, a fresh node credential of
 * which only the hash is kept (credentials.ts).
 *
 * Refusals: 400 malformed body; 401 the token cannot be used (join-token-lifecycle.ts says why); 422 bad node name,
 * site or key; 409 the node already joined with another key. Re-joining with the SAME key and a valid
 * token is idempotent: same Node, a new credential (the old one stops working). The token is marked used
 * before anything else is written, so a token is never good for two joins; the Node (spec.site) is created
 * when missing. Joins run one at a time (one control-plane process), so two joins for one name cannot race.
 *
 * Attempts are rate-limited before the body is read, per source address and overall (token buckets,
 * api/meta/rate-limiter.ts): beyond `JOIN_RATE`, 429 TooManyRequests with `Retry-After`, so join tokens
 * cannot be guessed at speed and a flood of joins cannot keep the control plane busy.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, isReason, type StatusCause } from '../../meta/api-error.ts';
import type { Logger } from '../../meta/logger.ts';
import type { Clock } from '../../meta/clock.ts';
import { RateLimiter } from '../../meta/rate-limiter.ts';
import { createSerial } from '../../meta/serial.ts';
import { API_VERSION, type KubeObject } from '../../meta/types.ts';
import type { Store } from '../../store/types.ts';
import type { Node } from '../../v1alpha1/generated/node.ts';
import { validateObject } from '../../v1alpha1/validate.ts';
import { parseBody, readBody } from '../http/body.ts';
import type { NodeCredentials } from './credentials.ts';
import { checkJoinToken, markTokenUsed } from './join-token-lifecycle.ts';
import { sendJson } from '../http/respond.ts';

/** The largest join request accepted. */
const MAX_JOIN_BYTES = 64 * 1024;

/** Join attempts allowed: per source address, and from all addresses together (per minute, and at once). */
export const JOIN_RATE: JoinRate = {
  perAddress: { perMinute: 10, burst: 20 },
  overall: { perMinute: 120, burst: 60 },
};

/** The join attempts allowed (JOIN_RATE by default). */
export interface JoinRate {
  perAddress: { perMinute: number; burst: number };
  overall: { perMinute: number; burst: number };
}

/** What a join handler needs. */
export interface JoinHandlerOptions {
  store: Store;
  credentials: NodeCredentials;
  logger: Logger;
  /** The clock of the rate limits. */
  clock: Clock;
  /** Default JOIN_RATE. */
  rate?: JoinRate;
}

/** A checked join request. */
interface JoinRequest {
  token: string;
  nodeName: string;
  site?: string;
  nodeKey: string;
}

/** Creates the `POST /join` handler (joins are serialized). */
export function createJoinHandler(
  opts: JoinHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const serial = createSerial();
  const limit = joinLimiter(opts.clock, opts.rate ?? JOIN_RATE);
  return async (req, res) => {
    limit(req.socket.remoteAddress ?? '');
    const body = parseBody(await readBody(req, MAX_JOIN_BYTES), 'json');
    const input = checkRequest(body);
    const credential = await serial(() => join(opts, input));
    sendJson(res, 200, { nodeName: input.nodeName, credential }, { 'Cache-Control': 'no-store' });
  };
}

/** Throws 429 when `address`, or everyone, has used up its join attempts. */
function joinLimiter(clock: Clock, rate: JoinRate): (address: string) => void {
  const perAddress = new RateLimiter({ ...rate.perAddress, clock });
  const overall = new RateLimiter({ ...rate.overall, clock });
  return (address) => {
    const wait = perAddress.take(address);
    if (wait !== undefined)
      throw ApiError.tooManyRequests(`too many join attempts from ${address}; try again later`, wait, 'join_rate');
    const all = overall.take('');
    if (all !== undefined) throw ApiError.tooManyRequests('too many join attempts; try again later', all, 'join_rate');
  };
}

async function join(opts: JoinHandlerOptions, input: JoinRequest): Promise<string> {
  const { store, credentials, logger } = opts;
  const token = checkJoinToken(store, input.token);
  const known = credentials.nodeKey(input.nodeName);
  if (known !== undefined && known !== input.nodeKey) {
    throw ApiError.conflict(
      'nodes',
      input.nodeName,
      `node ${input.nodeName} already joined with another key; ` +
        `to give the name to this machine, delete the node first (meshctl delete node ${input.nodeName}), or join with another --name`,
    );
  }
  await markTokenUsed(store, token, input.nodeName);
  const node = await ensureNode(store, input);
  const credential = await credentials.issue(node, input.nodeKey);
  logger.info(known ? 'Re-joined Node' : 'Joined Node', {
    node: input.nodeName,
    token: token.metadata.name,
    site: input.site,
  });
  return credential;
}

async function ensureNode(store: Store, input: JoinRequest): Promise<KubeObject> {
  const existing = store.get('nodes', input.nodeName);
  if (existing) return existing;
  try {
    return await store.create('nodes', nodeObject(input));
  } catch (e) {
    const raced = isReason(e, 'AlreadyExists') ? store.get('nodes', input.nodeName) : undefined;
    if (raced) return raced;
    throw e;
  }
}

function nodeObject(input: { nodeName: string; site?: string }): Node {
  return {
    apiVersion: API_VERSION,
    kind: 'Node',
    metadata: { name: input.nodeName },
    spec: input.site ? { site: input.site } : {},
  };
}

/** Checks the body's shape (400), then the name, site and key (422 with causes). */
function checkRequest(body: Record<string, unknown>): JoinRequest {
  for (const field of ['token', 'nodeName', 'nodeKey'] as const) {
    if (typeof body[field] !== 'string' || body[field] === '')
      throw ApiError.badRequest(`the join request needs "${field}" (a non-empty string)`);
  }
  if (body.site !== undefined && typeof body.site !== 'string') throw ApiError.badRequest('"site" must be a string');
  const input: JoinRequest = {
    token: body.token as string,
    nodeName: body.nodeName as string,
    nodeKey: body.nodeKey as string,
    ...(body.site ? { site: body.site } : {}),
  };
  const fields: Record<string, string> = { 'metadata.name': 'nodeName', 'spec.site': 'site' };
  const causes: StatusCause[] = validateObject(nodeObject(input)).map((c) => ({
    ...c,
    field: fields[c.field ?? ''] ?? c.field,
  }));
  const keyProblem = checkNodeKey(input.nodeKey);
  if (keyProblem) causes.push({ field: 'nodeKey', reason: 'FieldValueInvalid', message: keyProblem });
  if (causes.length) throw ApiError.invalid('Node', input.nodeName, causes);
  input.nodeKey = canonicalKey(input.nodeKey);
  return input;
}

/** Why a node key is unacceptable, or undefined when it is an Ed25519 or P-256 public key in base64 SPKI DER. */
function checkNodeKey(nodeKey: string): string | undefined {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(nodeKey, 'base64'), format: 'der', type: 'spki' });
  } catch {
    return 'must be a public key in base64 SubjectPublicKeyInfo DER';
  }
  if (key.asymmetricKeyType === 'ed25519') return undefined;
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return undefined;
  return `must be an Ed25519 or ECDSA P-256 key, not ${key.asymmetricKeyType}`;
}

/** The key re-encoded, so that the same key always compares equal. */
function canonicalKey(nodeKey: string): string {
  const der = createPublicKey({ key: Buffer.from(nodeKey, 'base64'), format: 'der', type: 'spki' }).export({
    type: 'spki',
    format: 'der',
  });
  return der.toString('base64');
}
