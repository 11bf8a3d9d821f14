/**
 * POST (create), PUT (update), PATCH (JSON merge patch, JSON patch, server-side apply) and DELETE of one
 * object, with `?dryRun=All` and `?fieldValidation=` (field-validation.ts).
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
import { bodyFormat, CONTENT_TYPES, parseBody, readBody, readJsonPatchBody, readObjectBody } from '../http/body.ts';
import type { BodyFormat } from '../http/body.ts';
import type { ResourceRequest } from './context.ts';
import { boolParam, dryRunParam, propagationPolicy } from './context.ts';
import { checkUnknownFields, fieldValidationParam, type FieldValidation } from './field-validation.ts';
import { applyJsonPatch } from './json-patch.ts';
import { entriesAfterUpdate, isTracked } from './managed-fields.ts';
import { applyMergePatch } from './merge-patch.ts';
import { applyConfig, isRace } from './server-side-apply.ts';
import { getOrNotFound } from './read-handlers.ts';
import { sendJson } from '../http/respond.ts';

/** How often a patch without a resourceVersion is retried when a concurrent write got in between. */
const PATCH_ATTEMPTS = 5;

async function readObject(r: ResourceRequest, accepted: BodyFormat[]): Promise<Record<string, unknown>> {
  const format = bodyFormat(r.req.headers['content-type'], accepted);
  if (!format) throw unsupportedMediaType(r.req.headers['content-type'], accepted);
  return readObjectBody(r.req, r.maxBodyBytes, format);
}

function unsupportedMediaType(got: string | undefined, accepted: BodyFormat[]): ApiError {
  const types = accepted.map((f) => CONTENT_TYPES[f][0]);
  return new ApiError({
    reason: 'UnsupportedMediaType',
    message: `the body type "${got ?? ''}" is not supported; supported: ${types.join(', ')}`,
  });
}

/** POST `/<plural>`: 201 with the created object. */
export async function handleCreate(r: ResourceRequest): Promise<void> {
  const body = await readObject(r, ['json', 'yaml']);
  const obj = admitCreate(r.info, body);
  const warnings = checkUnknownFields(r.info, obj, fieldValidationParam(r.query));
  const created = await r.store.create(r.info.plural, obj, {
    dryRun: dryRunParam(r.query),
    admit: admission(r.info, r.store),
  });
  setWarnings(r.res, [...warnings, ...admissionWarnings(created, r.store)]);
  sendJson(r.res, 201, created);
}

/** PUT `/<plural>/<name>[/status]`: 200 with the stored object. */
export async function handleUpdate(r: ResourceRequest): Promise<void> {
  const body = checkTypeMeta(r.info, await readObject(r, ['json', 'yaml']));
  checkUrlName(body, r.name!);
  const warnings = checkUnknownFields(r.info, body, fieldValidationParam(r.query));
  const stored = r.store.get(r.info.plural, r.name!);
  if (stored) checkUid(r, body, stored);
  trackUpdate(r, stored, body);
  const updated = await r.store.update(r.info.plural, body, { dryRun: dryRunParam(r.query), ...updateOpts(r) });
  setWarnings(r.res, [...warnings, ...(r.subresource ? [] : admissionWarnings(updated, r.store))]);
  sendJson(r.res, 200, updated);
}

/**
 * The managedFields a non-apply write stores: for an object applied server-side, the writer (`?fieldManager=`,
 * else the User-Agent up to its first `/`, as kube-apiserver) takes the fields it changes; otherwise none.
 * A `/status` write keeps the stored ones (the store keeps the stored metadata).
 */
function trackUpdate(r: ResourceRequest, stored: KubeObject | undefined, body: KubeObject): void {
  const meta = body.metadata as { managedFields?: unknown };
  if (!stored || !isTracked(stored) || r.subresource) {
    delete meta.managedFields;
    return;
  }
  const agent = String(r.req.headers['user-agent'] ?? 'unknown').split('/')[0];
  meta.managedFields = entriesAfterUpdate(stored, body, r.query.get('fieldManager') || agent);
}

/** The patch types served; a strategic merge patch (kubectl patch's default) gets 415 naming them, as for a CRD. */
const PATCH_FORMATS: BodyFormat[] = ['merge-patch', 'json-patch', 'apply-patch'];

/**
 * PATCH `/<plural>/<name>[/status]`: JSON merge patch, JSON patch (json-patch.ts) or server-side apply
 * (server-side-apply.ts); 415 for any other type. A resourceVersion in the patched object is a precondition
 * (409 when stale); without one, a write that got in between is not overwritten: the patch is re-applied to
 * the new object.
 */
export async function handlePatch(r: ResourceRequest): Promise<void> {
  const format = bodyFormat(r.req.headers['content-type'], PATCH_FORMATS);
  if (!format) throw unsupportedMediaType(r.req.headers['content-type'], PATCH_FORMATS);
  if (format === 'apply-patch') return handleApply(r, await readObjectBody(r.req, r.maxBodyBytes, format));
  const patch =
    format === 'json-patch'
      ? await readJsonPatchBody(r.req, r.maxBodyBytes)
      : await readObjectBody(r.req, r.maxBodyBytes, format);
  const mode = fieldValidationParam(r.query);
  const patchFn = (stored: KubeObject): unknown =>
    Array.isArray(patch) ? applyJsonPatch(stored, patch) : mergePatched(stored, patch, mode);
  const dryRun = dryRunParam(r.query);
  for (let attempt = 1; ; attempt++) {
    const stored = getOrNotFound(r, r.name!);
    const patched = patchFn(stored);
    if (patched === null || typeof patched !== 'object' || Array.isArray(patched))
      throw new ApiError({ reason: 'Invalid', message: 'the patched document is not an object' });
    const body = checkTypeMeta(r.info, patched as Record<string, unknown>);
    checkUrlName(body, r.name!);
    checkUid(r, body, stored);
    const warnings = checkUnknownFields(r.info, body, mode);
    trackUpdate(r, stored, body);
    try {
      const updated = await r.store.update(r.info.plural, body, { dryRun, ...updateOpts(r) });
      setWarnings(r.res, [...warnings, ...(r.subresource ? [] : admissionWarnings(updated, r.store))]);
      sendJson(r.res, 200, updated);
      return;
    } catch (e) {
      if (
        stored.metadata.resourceVersion !== body.metadata.resourceVersion ||
        attempt >= PATCH_ATTEMPTS ||
        !isReason(e, 'Conflict')
      )
        throw e;
    }
  }
}

/**
 * A merge patch applied without a deep copy of the stored object (at a heartbeat a second per node, the copy
 * cost more than the rest of the patch): applyMergePatch copies only the objects along the patch's paths and
 * shares the rest with the stored object, which nothing modifies (the store shares unchanged parts between
 * versions too). What this handler then changes in place is made the result's own: its metadata
 * (`trackUpdate`), and everything when unknown fields are to be dropped (`checkUnknownFields`).
 */
function mergePatched(stored: KubeObject, patch: unknown, mode: FieldValidation | undefined): unknown {
  const out = applyMergePatch(stored, patch);
  if (mode !== undefined) return structuredClone(out);
  if (!isPlainObject(out) || !isPlainObject(out.metadata)) return out;
  return { ...out, metadata: { ...out.metadata } };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Server-side apply of a configuration: creates (201) or updates (200) the object; retried when a write got in between. */
async function handleApply(r: ResourceRequest, body: Record<string, unknown>): Promise<void> {
  if (r.subresource)
    throw unsupportedMediaType('application/apply-patch+yaml (on /status)', ['merge-patch', 'json-patch']);
  const manager = r.query.get('fieldManager');
  if (!manager) throw ApiError.badRequest('fieldManager is required for apply requests');
  const config = checkTypeMeta(r.info, body);
  checkUrlName(config, r.name!);
  const warnings = checkUnknownFields(r.info, config, fieldValidationParam(r.query));
  const dryRun = dryRunParam(r.query);
  for (let attempt = 1; ; attempt++) {
    const stored = r.store.get(r.info.plural, r.name!);
    const obj = applyConfig(stored, config, manager, boolParam(r.query, 'force'));
    try {
      const written = stored
        ? await r.store.update(r.info.plural, obj, { dryRun, ...updateOpts(r) })
        : await r.store.create(r.info.plural, obj, { dryRun, admit: admission(r.info, r.store) });
      setWarnings(r.res, [...warnings, ...admissionWarnings(written, r.store)]);
      sendJson(r.res, stored ? 200 : 201, written);
      return;
    } catch (e) {
      if (attempt >= PATCH_ATTEMPTS || !(isRace(e) || isReason(e, 'AlreadyExists'))) throw e;
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

function optionalString<K extends string>(key: K, v: unknown): Partial<Record<K, string>> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'string') throw ApiError.badRequest(`preconditions.${key} must be a string`);
  return { [key]: v } as Partial<Record<K, string>>;
}
