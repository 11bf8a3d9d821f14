/**
 * Admission of writes: the body must be an object of the URL's kind (400 otherwise), carry the URL's name
 * (400) and pass validation, singleton names included (422 Invalid with field causes). No second assignment
 * of a role module (admission-roles.ts).
 *
 * What the object becomes is the store's to decide, for every writer alike (this server and `meshctl init`,
 * which opens the store directly): the name from generateName, and status separation (a main-resource write
 * keeps the stored status, a `/status` write changes only the status). So validation is not run here on the
 * body but handed to the store (`admit`), which runs it on the object exactly as it would store it.
 * What stays here is API policy: a client's create does not set a status the kind keeps in `/status`.
 */
import { ApiError } from '../../meta/api-error.ts';
import type { KubeObject } from '../../meta/types.ts';
import { API_VERSION } from '../../meta/types.ts';
import type { KindInfo } from '../../v1alpha1/kind-info.ts';
import { validateObject, validateStatusWrite } from '../../v1alpha1/validate.ts';
import type { Store } from '../../store/types.ts';
import { checkRoleAssignment } from './admission-roles.ts';

/** Metadata fields kube-apiserver does not keep when empty (`omitempty` in ObjectMeta). */
const OMITTED_WHEN_EMPTY = ['labels', 'annotations', 'ownerReferences', 'finalizers'];

/**
 * Checks apiVersion, kind and the shape of metadata; returns the body typed as an object. As kube-apiserver,
 * it clears `metadata.namespace` (every kind of ours is cluster-scoped) and drops empty labels, annotations,
 * ownerReferences and finalizers.
 */
export function checkTypeMeta(info: KindInfo, body: Record<string, unknown>): KubeObject {
  if (body.apiVersion !== API_VERSION) {
    throw ApiError.badRequest(
      `the apiVersion in the body (${JSON.stringify(body.apiVersion ?? null)}) does not match the URL's (${API_VERSION})`,
    );
  }
  if (body.kind !== info.kind) {
    throw ApiError.badRequest(
      `the kind in the body (${JSON.stringify(body.kind ?? null)}) does not match the kind of the URL (${info.kind}, resource "${info.plural}")`,
    );
  }
  if (body.metadata === undefined) body.metadata = {};
  if (body.metadata === null || typeof body.metadata !== 'object' || Array.isArray(body.metadata)) {
    throw ApiError.invalid(info.kind, '', [
      { field: 'metadata', message: 'must be an object', reason: 'FieldValueInvalid' },
    ]);
  }
  const meta = body.metadata as Record<string, unknown>;
  delete meta.namespace;
  for (const k of OMITTED_WHEN_EMPTY) {
    const v = meta[k];
    if (v !== null && typeof v === 'object' && Object.keys(v).length === 0) delete meta[k];
  }
  return body as KubeObject;
}

/** Fails with 400 when the body names another object than the URL. */
export function checkUrlName(obj: KubeObject, urlName: string): void {
  const name = obj.metadata.name;
  if (name === undefined || name === '') {
    obj.metadata.name = urlName;
    return;
  }
  if (name !== urlName)
    throw ApiError.badRequest(`the name of the object (${name}) does not match the name on the URL (${urlName})`);
}

/** Validates the object as it would be stored (schema, name rules incl. singletons): 422 Invalid with causes. */
export function validate(info: KindInfo, obj: KubeObject): void {
  const causes = validateObject(obj);
  if (causes.length) throw ApiError.invalid(info.kind, obj.metadata.name ?? '', causes);
}

/**
 * Prepares a create body for the store: type meta checked, a status the kind keeps in `/status` dropped, and
 * no managedFields (a created object has none until it is applied server-side: resources/managed-fields.ts).
 */
export function admitCreate(info: KindInfo, body: Record<string, unknown>): KubeObject {
  const obj = checkTypeMeta(info, body);
  if (info.hasStatus) delete obj.status;
  delete (obj.metadata as { managedFields?: unknown }).managedFields;
  return obj;
}

/**
 * The admission check of a create or update, for the store's `admit` option (it runs it on the object as it
 * would be stored): schema validation — of the status alone for a `/status` write, which keeps every other field
 * as stored (validateStatusWrite) — and for writes of the main resource, the role rules.
 */
export function admission(
  info: KindInfo,
  store: Pick<Store, 'list'>,
  subresource?: 'status',
): (obj: KubeObject) => void {
  return (obj) => {
    if (subresource !== 'status') {
      validate(info, obj);
      checkRoleAssignment(obj, store);
      return;
    }
    const causes = validateStatusWrite(obj);
    if (causes.length) throw ApiError.invalid(info.kind, obj.metadata.name ?? '', causes);
  };
}
