/**
 * The JoinToken lifecycle on the server: creation (`POST .../jointokens`: the server picks the id and the
 * secret, stores only the hash, and returns the whole token ONCE, in the `X-Meshctl-Join-Token` response
 * header — the body is the JoinToken object like any create, so it never carries the secret), and the
 * checks of a presented token at join (unknown, deleted, wrong secret, used, expired: each a 401 naming why)
 * and marking it used. Deleting a JoinToken deletes its secret by cascade (secrets.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, isReason } from '../../meta/api-error.ts';
import type { Logger } from '../../meta/logger.ts';
import { rfc3339 } from '../../meta/timestamp.ts';
import type { KubeObject } from '../../meta/types.ts';
import type { Store } from '../../store/types.ts';
import type { JoinToken } from '../../v1alpha1/generated/jointoken.ts';
import { kindByPlural } from '../../v1alpha1/kinds.ts';
import { admission, admitCreate, checkTypeMeta } from '../resources/admission.ts';
import { hashToken } from './auth.ts';
import { bodyFormat, parseBody, readBody } from '../http/body.ts';
import { dryRunParam } from '../resources/context.ts';
import { checkUnknownFields, fieldValidationParam } from '../resources/field-validation.ts';
import { setWarnings } from '../resources/admission-warnings.ts';
import {
  DEFAULT_TTL,
  TOKEN_ID_PATTERN,
  generateTokenId,
  generateTokenSecret,
  ttlMs,
  tokenId,
} from './join-token-format.ts';
import { sendJson } from '../http/respond.ts';
import { joinTokenSecretName, readSecret, sameHash, writeSecret } from './secrets.ts';

/** The response header that carries a new token, once. */
export const TOKEN_HEADER = 'X-Meshctl-Join-Token';
const PLURAL = 'jointokens';
const INFO = kindByPlural(PLURAL)!;

/** What the create handler needs of the request. */
export interface TokenCreateRequest {
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  store: Store;
  maxBodyBytes: number;
  logger: Logger;
}

/**
 * `POST /apis/meshctl.dev/v1alpha1/jointokens`: 201 with the JoinToken; its status says when it expires.
 * Without metadata.name the server picks a free id. A name that is not a token id ([a-z0-9]{6}, e.g. a
 * manifest applied by hand) is accepted but gets no secret: it cannot be used to join.
 */
export async function createJoinToken(r: TokenCreateRequest): Promise<void> {
  const format = bodyFormat(r.req.headers['content-type'], ['json', 'yaml']);
  if (!format)
    throw new ApiError({
      reason: 'UnsupportedMediaType',
      message: 'a JoinToken must be sent as application/json or application/yaml',
    });
  const body = checkTypeMeta(INFO, parseBody(await readBody(r.req, r.maxBodyBytes), format));
  setWarnings(r.res, checkUnknownFields(INFO, body, fieldValidationParam(r.query)));
  if (!body.metadata.name) {
    body.metadata.name = freeId(r.store);
    delete body.metadata.generateName;
  }
  const obj = admitCreate(INFO, body) as JoinToken & KubeObject;
  admission(INFO, r.store)(obj);
  const ttl = obj.spec?.ttl ?? DEFAULT_TTL;
  obj.spec = { ...obj.spec, ttl };
  obj.status = { expiresAt: new Date(Date.now() + ttlMs(ttl)).toISOString(), used: false };
  const dryRun = dryRunParam(r.query);
  const created = await r.store.create(PLURAL, obj, { dryRun });
  const id = created.metadata.name!;
  if (dryRun || !TOKEN_ID_PATTERN.test(id)) {
    sendJson(r.res, 201, created);
    return;
  }
  const token = `${id}.${generateTokenSecret()}`;
  await writeSecret(r.store, {
    name: joinTokenSecretName(id),
    type: 'join-token',
    owner: created,
    data: { sha256: hashToken(token) },
  });
  r.logger.info('Created JoinToken', { name: id, expiresAt: obj.status.expiresAt });
  sendJson(r.res, 201, created, { [TOKEN_HEADER]: token, 'Cache-Control': 'no-store' });
}

function freeId(store: Store): string {
  for (let i = 0; i < 16; i++) {
    const id = generateTokenId();
    if (!store.get(PLURAL, id)) return id;
  }
  throw new ApiError({ reason: 'InternalError', message: 'could not find a free join token id' });
}

/** The 401 of a refused join token: one generic message plus why, in words an operator can act on. */
export function refusedToken(why: string): ApiError {
  return new ApiError({ reason: 'Unauthorized', message: `the join token was refused: ${why}` });
}

const CREATE_ANOTHER = 'create a new one with `meshctl token create`';

/** Checks a presented token; returns its JoinToken or throws the 401 saying why it cannot be used. */
export function checkJoinToken(store: Store, token: string, now = Date.now()): JoinToken & KubeObject {
  const id = tokenId(token);
  if (!id)
    throw refusedToken(
      'it is not of the form <id>.<secret> ([a-z0-9]{6}.[a-z0-9]{16}); copy it again from `meshctl token create`',
    );
  const obj = store.get(PLURAL, id) as (JoinToken & KubeObject) | undefined;
  if (!obj)
    throw refusedToken(
      `join token ${id} does not exist: it was deleted, or never created on this control plane; ${CREATE_ANOTHER}`,
    );
  const stored = readSecret(store, joinTokenSecretName(id), 'join-token')?.data.sha256;
  if (!stored)
    throw refusedToken(
      `join token ${id} has no secret (it was not made by \`meshctl token create\`); ${CREATE_ANOTHER}`,
    );
  if (!sameHash(hashToken(token), stored)) {
    throw refusedToken(`the secret of join token ${id} is wrong; check the token for typos`);
  }
  const s = obj.status ?? {};
  if (s.used)
    throw refusedToken(
      `join token ${id} was already used${s.usedBy ? ` by node ${s.usedBy}` : ''}${s.usedAt ? ` at ${s.usedAt}` : ''}; tokens are single-use: ${CREATE_ANOTHER}`,
    );
  if (obj.metadata.deletionTimestamp) throw refusedToken(`join token ${id} is being deleted; ${CREATE_ANOTHER}`);
  const expiresAt = s.expiresAt ? Date.parse(s.expiresAt) : NaN;
  if (!(now < expiresAt))
    throw refusedToken(`join token ${id} has expired${s.expiresAt ? ` (at ${s.expiresAt})` : ''}; ${CREATE_ANOTHER}`);
  return obj;
}

/** Marks a checked token used by `node` (a concurrent use of the same token loses with a 401). */
export async function markTokenUsed(store: Store, token: JoinToken & KubeObject, node: string): Promise<void> {
  const usedAt = rfc3339();
  const next = { ...token, status: { ...token.status, used: true, usedBy: node, usedAt } };
  try {
    await store.update(PLURAL, next, { subresource: 'status' });
  } catch (e) {
    if (isReason(e, 'Conflict') || isReason(e, 'NotFound'))
      throw refusedToken(`join token ${token.metadata.name} was used or deleted at the same time; ${CREATE_ANOTHER}`);
    throw e;
  }
}
