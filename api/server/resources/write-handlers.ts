/**
 * POST (create), PUT (update), PATCH (JSON merge patch) and DELETE of one object, with `?dryRun=All`.
 * Every write goes to the store with admission (admission.ts) as its `admit` check; the store names the
 * object, separates status from the rest, runs admission on the result and makes it durable before the reply.
 * A write of the main resource that is accepted but looks wrong carries `Warning` headers (admission-warnings.ts).
 */
import { ApiError, isReason } from '../../meta/api-error.ts';
import type { KubeObject } from '../../meta/types.ts';
import type { DeleteOptions, UpdateOptions } from '../../store/types.ts';
import { admission, admitCreate, checkTypeMeta, checkUrlName } from './admission.ts';
import { checkRoleDelete } from './admission-roles.ts';
import { admissionWarnings, setWarnings } from './admission-warnings.ts';
import { bodyFormat, parseBody, readBody } from '../http/body.ts';
import type { BodyFormat } from '../http/body.ts';
import type { ResourceRequest } from './context.ts';
import { dryRunParam, propagationPolicy } from './context.ts';
import { applyMergePatch } from './merge-patch.ts';
import { getOrNotFound } from './read-handlers.ts';
import { sendJson } from '../http/respond.ts';

/** How often a patch without a resourceVersion is retried when a concurrent write got in between. */
const PATCH_ATTEMPTS = 5;

async function readObject(r: ResourceRequest, accepted: BodyFormat[]): Promise<Record<string, unknown>> {
  const format = bodyFormat(r.req.headers['content-type'], accepted);
  if (!format) throw unsupportedMediaType(r.req.headers['content-type'], accepted);
  return parseBody(await readBody(r.req, r.maxBodyBytes), format);
}

function unsupportedMediaType(got: string | undefined, accepted: BodyFormat[]): ApiError {
  const types = accepted.map((f) =>
    f === 'json' ? 'application/json' : f === 'yaml' ? 'application/yaml' : 'application/merge-patch+json',
  );
  return new ApiError({
    reason: 'UnsupportedMediaType',
    message: `the body type "${got ?? ''}" is not supported; supported: ${types.join(', ')}`,
  });
}

/** POST `/<plural>`: 201 with the created object. */
export async function handleCreate(r: ResourceRequest): Promise<void> {
  const body = await readObject(r, ['json', 'yaml']);
  const obj = admitCreate(r.info, body);
  const created = await r.store.create(r.info.plural, obj, {
    dryRun: dryRunParam(r.query),
    admit: admission(r.info, r.store),
  });
  setWarnings(r.res, admissionWarnings(created, r.store));
  sendJson(r.res, 201, created);
}

/** PUT `/<plural>/<name>[/status]`: 200 with the stored object. */
export async function handleUpdate(r: ResourceRequest): Promise<void> {
  const body = checkTypeMeta(r.info, await readObject(r, ['json', 'yaml']));
  checkUrlName(body, r.name!);
  const stored = r.store.get(r.info.plural, r.name!);
  if (stored) checkUid(r, body, stored);
  const updated = await r.store.update(r.info.plural, body, { dryRun: dryRunParam(r.query), ...updateOpts(r) });
  if (!r.subresource) setWarnings(r.res, admissionWarnings(updated, r.store));
  sendJson(r.res, 200, updated);
}

/**
 * PATCH `/<plural>/<name>[/status]` with `application/merge-patch+json` only (415 otherwise).
 * A resourceVersion in the patch is a precondition (409 when stale); without one, a write that got in
 * between is not overwritten: the patch is re-applied to the new object.
 */
export async function handlePatch(r: ResourceRequest): Promise<void> {
  const patch = await readObject(r, ['merge-patch']);
  const dryRun = dryRunParam(r.query);
  const pinned = hasResourceVersion(patch);
  for (let attempt = 1; ; attempt++) {
    const stored = getOrNotFound(r, r.name!);
    const merged = applyMergePatch(structuredClone(stored), patch) as Record<string, unknown>;
    const body = checkTypeMeta(r.info, merged);
    checkUrlName(body, r.name!);
    checkUid(r, body, stored);
    try {
      const updated = await r.store.update(r.info.plural, body, { dryRun, ...updateOpts(r) });
      if (!r.subresource) setWarnings(r.res, admissionWarnings(updated, r.store));
      sendJson(r.res, 200, updated);
      return;
    } catch (e) {
      if (pinned || attempt >= PATCH_ATTEMPTS || !isReason(e, 'Conflict')) throw e;
    }
  }
}

/** DELETE `/<plural>/<name>`, with an optional DeleteOptions body (preconditions, propagationPolicy, dryRun). */
export async function handleDelete(r: ResourceRequest): Promise<void> {
  const raw = await readBody(r.req, r.maxBodyBytes);
  const body = raw.length ? parseBody(raw, bodyFormat(r.req.headers['content-type'], ['json', 'yaml']) ?? 'json') : {};
  const pre = (body.preconditions ?? {}) as { resourceVersion?: unknown; uid?: unknown };
  const opts: DeleteOptions = {
    dryRun: dryRunParam(r.query, body.dryRun),
    ...optionalString('resourceVersion', pre.resourceVersion),
    ...optionalString('uid', pre.uid),
  };
  const policy = propagationPolicy(r.query.get('propagationPolicy') ?? body.propagationPolicy);
  if (policy) opts.propagationPolicy = policy;
  if (body.orphanDependents === true && !policy) opts.propagationPolicy = 'Orphan';
  checkRoleDelete(r.info.plural, r.name!, r.store);
  const deleted = await r.store.delete(r.info.plural, r.name!, opts);
  sendJson(r.res, 200, deleted);
}

/** The store's update options of a request: its subresource, and admission run on the object as the store would store it. */
function updateOpts(r: ResourceRequest): Pick<UpdateOptions, 'subresource' | 'admit'> {
  return { admit: admission(r.info, r.store, r.subresource), ...(r.subresource ? { subresource: r.subresource } : {}) };
}

/** A uid in the body is a precondition, as kube's: 409 Conflict when it is not the stored object's. */
function checkUid(r: ResourceRequest, body: KubeObject, stored: KubeObject): void {
  const uid = body.metadata.uid;
  if (uid === undefined || uid === stored.metadata.uid) return;
  throw ApiError.conflict(
    r.info.plural,
    r.name!,
    `Precondition failed: UID in precondition: ${String(uid)}, UID in object meta: ${stored.metadata.uid}`,
  );
}

function hasResourceVersion(patch: Record<string, unknown>): boolean {
  const meta = patch.metadata as KubeObject['metadata'] | undefined;
  return typeof meta === 'object' && meta !== null && typeof meta.resourceVersion === 'string';
}

function optionalString<K extends string>(key: K, v: unknown): Partial<Record<K, string>> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'string') throw ApiError.badRequest(`preconditions.${key} must be a string`);
  return { [key]: v } as Partial<Record<K, string>>;
}
