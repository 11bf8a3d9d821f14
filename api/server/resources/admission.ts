/**
 * Admission of writes: the body must be an object of the URL's kind (400 otherwise), carry the URL's name
 * (400) and pass validation, singleton names included (422 Invalid with field causes).
 * Status separation happens here too: the main resource keeps the stored status, `/status` keeps
 * everything but the status. No second assignment of a role module (admission-roles.ts).
 */
import { randomInt } from 'node:crypto';
import { ApiError } from '../../meta/api-error.ts';
import type { KubeObject, ObjectMeta } from '../../meta/types.ts';
import { API_VERSION } from '../../meta/types.ts';
import type { KindInfo } from '../../v1alpha1/kind-info.ts';
import { validateObject } from '../../v1alpha1/validate.ts';
import type { Store } from '../../store/types.ts';
import { checkRoleAssignment } from './admission-roles.ts';

/** Checks apiVersion, kind and the shape of metadata; returns the body typed as an object. */
export function checkTypeMeta(info: KindInfo, body: Record<string, unknown>): KubeObject {
  if (body.apiVersion !== API_VERSION) {
    throw ApiError.badRequest(`the apiVersion in the body (${JSON.stringify(body.apiVersion ?? null)}) does not match the URL's (${API_VERSION})`);
  }
  if (body.kind !== info.kind) {
    throw ApiError.badRequest(`the kind in the body (${JSON.stringify(body.kind ?? null)}) does not match the kind of the URL (${info.kind}, resource "${info.plural}")`);
  }
  if (body.metadata === undefined) body.metadata = {};
  if (body.metadata === null || typeof body.metadata !== 'object' || Array.isArray(body.metadata)) {
    throw ApiError.invalid(info.kind, '', [{ field: 'metadata', message: 'must be an object', reason: 'FieldValueInvalid' }]);
  }
  return body as KubeObject;
}

/** Fails with 400 when the body names another object than the URL. */
export function checkUrlName(obj: KubeObject, urlName: string): void {
  const name = obj.metadata.name;
  if (name === undefined || name === '') { obj.metadata.name = urlName; return; }
  if (name !== urlName) throw ApiError.badRequest(`the name of the object (${name}) does not match the name on the URL (${urlName})`);
}

/** Validates the object as it would be stored (schema, name rules incl. singletons): 422 Invalid with causes. */
export function validate(info: KindInfo, obj: KubeObject): void {
  const causes = validateObject(obj);
  if (causes.length) throw ApiError.invalid(info.kind, obj.metadata.name ?? '', causes);
}

/** Prepares a create: names the object (generateName too), drops a status the kind keeps in `/status`, validates. */
export function admitCreate(info: KindInfo, body: Record<string, unknown>, store: Pick<Store, 'list'>): KubeObject {
  const obj = checkTypeMeta(info, body);
  const meta: ObjectMeta = obj.metadata;
  if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) meta.name = meta.generateName + randomSuffix();
  if (!meta.name) {
    throw ApiError.invalid(info.kind, '', [{ field: 'metadata.name', reason: 'FieldValueRequired', message: 'Required value: name or generateName is required' }]);
  }
  if (info.hasStatus) delete obj.status;
  validate(info, obj);
  checkRoleAssignment(obj, store);
  return obj;
}

/**
 * Prepares an update of the main resource or of `/status` from the body and the stored object.
 * Main: the body with the stored status. Status: the stored object with the body's status.
 * The body's metadata.resourceVersion is kept as the precondition either way.
 */
export function admitUpdate(info: KindInfo, body: KubeObject, stored: KubeObject, subresource: 'status' | undefined, store: Pick<Store, 'list'>): KubeObject {
  const rv = body.metadata.resourceVersion;
  let obj: KubeObject;
  if (subresource === 'status') {
    obj = structuredClone(stored);
    if (body.status === undefined) delete obj.status;
    else obj.status = body.status;
  } else {
    obj = body;
    if (info.hasStatus && stored.status === undefined) delete obj.status;
    else if (info.hasStatus) obj.status = structuredClone(stored.status);
  }
  if (rv === undefined) delete obj.metadata.resourceVersion;
  else obj.metadata.resourceVersion = rv;
  validate(info, obj);
  if (subresource !== 'status') checkRoleAssignment(obj, store);
  return obj;
}

function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < 5; i++) s += alphabet[randomInt(alphabet.length)];
  return s;
}
