/**
 * Runtime validation of meshctl objects against the same JSON Schemas the types are generated from.
 * Returns Kubernetes-style field causes for `ApiError.invalid`; ajv compiles each kind's schema on first use.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { StatusCause } from '../meta/api-error.ts';
import { API_VERSION } from '../meta/types.ts';
import type { KindInfo } from './kind-info.ts';
import { KINDS, kindByKind } from './kinds.ts';
import { appendField, cause, errorsToCauses, invalidValue } from './validation-causes.ts';
import { schemaFor } from './schemas.ts';
import metaSchema from './schemas/meta.schema.json' with { type: 'json' };
import hostResourceSchema from './schemas/host-resource.schema.json' with { type: 'json' };

export type { CauseReason } from './validation-causes.ts';

const RFC3339 = /^\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/;
const NAME = metaSchema.definitions.ObjectMeta.properties.name;
const NAME_PATTERN = new RegExp(NAME.pattern, 'u');

let ajv: Ajv | undefined;
const validators = new Map<string, ValidateFunction>();

/** The one ajv instance, with the shared schemas and our annotation keywords (`tsType`, `x-message`). */
function compiler(): Ajv {
  if (ajv) return ajv;
  ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, discriminator: true, verbose: true });
  ajv.addKeyword({ keyword: 'tsType', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)),
  });
  ajv.addSchema(metaSchema);
  ajv.addSchema(hostResourceSchema);
  return ajv;
}

/** The compiled validator of a kind, compiled on first use. */
function validatorFor(info: KindInfo): ValidateFunction {
  let v = validators.get(info.kind);
  if (!v) {
    v = compiler().compile(schemaFor(info.kind)!);
    validators.set(info.kind, v);
  }
  return v;
}

const statusValidators = new Map<string, ValidateFunction>();

/**
 * The kind's schema with every top-level field but `status` left unchecked (`{}`), for status writes
 * (validateStatusWrite). Its `$id` is the kind's, renamed in the same directory, so that relative references resolve
 * alike.
 */
function statusValidatorFor(info: KindInfo): ValidateFunction {
  let v = statusValidators.get(info.kind);
  if (!v) {
    const schema = schemaFor(info.kind) as { $id: string; properties: Record<string, unknown> };
    const properties = Object.fromEntries(
      Object.entries(schema.properties).map(([k, sub]) => [k, k === 'status' ? sub : {}]),
    );
    const id = schema.$id.replace(/\.schema\.json$/, '.status-write.schema.json');
    v = compiler().compile({ ...schema, $id: id, properties });
    statusValidators.set(info.kind, v);
  }
  return v;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** Checks apiVersion and kind; returns the kind when both are known. */
function typeMeta(obj: Record<string, unknown>): { info?: KindInfo; causes: StatusCause[] } {
  const causes: StatusCause[] = [];
  if (obj.apiVersion === undefined) causes.push(cause('apiVersion', 'FieldValueRequired', 'Required value'));
  else if (obj.apiVersion !== API_VERSION) {
    causes.push(
      cause(
        'apiVersion',
        'FieldValueNotSupported',
        `Unsupported value: ${show(obj.apiVersion)}: supported values: "${API_VERSION}"`,
      ),
    );
  }
  const info = typeof obj.kind === 'string' ? kindByKind(obj.kind) : undefined;
  if (obj.kind === undefined) causes.push(cause('kind', 'FieldValueRequired', 'Required value'));
  else if (!info) {
    const known = KINDS.map((k) => `"${k.kind}"`).join(', ');
    causes.push(
      cause('kind', 'FieldValueNotSupported', `Unsupported value: ${show(obj.kind)}: supported values: ${known}`),
    );
  }
  return { info: causes.length ? undefined : info, causes };
}

/**
 * Checks a name for a kind: required, a DNS-1123 subdomain, and for singletons (Mesh) the one allowed name.
 * Causes have field `metadata.name`.
 */
export function validateName(info: KindInfo, name: string | undefined): StatusCause[] {
  const field = 'metadata.name';
  if (name === undefined || name === '')
    return [cause(field, 'FieldValueRequired', 'Required value: name or generateName is required')];
  const causes: StatusCause[] = [];
  if (name.length > NAME.maxLength)
    causes.push(cause(field, 'FieldValueTooLong', `may not be longer than ${NAME.maxLength} characters`));
  if (!NAME_PATTERN.test(name)) causes.push(cause(field, 'FieldValueInvalid', invalidValue(name, NAME['x-message'])));
  if (info.singletonName !== undefined && name !== info.singletonName) causes.push(singletonCause(info, field, name));
  return causes;
}

function singletonCause(info: KindInfo, field: string, value: string): StatusCause {
  const why = `${info.kind} is a singleton; its only allowed name is "${info.singletonName}"`;
  return cause(field, 'FieldValueInvalid', invalidValue(value, why));
}

/** Name checks on metadata that the schema cannot express (required unless generateName; singletons). */
function nameCauses(info: KindInfo, meta: unknown): StatusCause[] {
  if (!isRecord(meta)) return [];
  if (typeof meta.name === 'string' && meta.name !== '') return validateName(info, meta.name);
  if (typeof meta.generateName === 'string' && meta.generateName !== '') {
    return info.singletonName === undefined ? [] : [singletonCause(info, 'metadata.generateName', meta.generateName)];
  }
  return validateName(info, undefined);
}

/** The most bytes all annotations of an object may hold, keys and values together (kube's limit). */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;
/** The longest prefix of a label or annotation key (a DNS subdomain, as kube's). */
const MAX_KEY_PREFIX = 253;

/** Limits on labels and annotations that the schema cannot express: the annotations' total size, key prefixes. */
function metadataLimitCauses(meta: unknown): StatusCause[] {
  if (!isRecord(meta)) return [];
  const causes: StatusCause[] = [];
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta[field];
    if (!isRecord(map)) continue;
    let bytes = 0;
    for (const [key, value] of Object.entries(map)) {
      bytes += Buffer.byteLength(key) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
      const slash = key.indexOf('/');
      if (slash > MAX_KEY_PREFIX) {
        const why = `the prefix (before "/") may not be longer than ${MAX_KEY_PREFIX} characters`;
        causes.push(cause(`metadata.${field}`, 'FieldValueInvalid', invalidValue(key.slice(0, 300), why)));
      }
    }
    if (field === 'annotations' && bytes > MAX_ANNOTATIONS_BYTES) {
      const why = `must have at most ${MAX_ANNOTATIONS_BYTES} bytes`;
      causes.push(cause('metadata.annotations', 'FieldValueTooLong', `Too long: ${why}`));
    }
  }
  return causes;
}

/** Ids unique within spec.resources, and dependsOn naming only earlier resources (Module, Declaration). */
function resourceListCauses(obj: Record<string, unknown>): StatusCause[] {
  const resources = isRecord(obj.spec) ? obj.spec.resources : undefined;
  if (!Array.isArray(resources)) return [];
  const causes: StatusCause[] = [];
  const earlier = new Set<string>();
  resources.forEach((r: unknown, i) => {
    if (!isRecord(r) || typeof r.id !== 'string') return;
    const at = appendField('spec.resources', String(i), true);
    if (earlier.has(r.id)) causes.push(cause(`${at}.id`, 'FieldValueDuplicate', `Duplicate value: ${show(r.id)}`));
    const deps = Array.isArray(r.dependsOn) ? r.dependsOn : [];
    deps.forEach((d: unknown, j) => {
      if (typeof d === 'string' && !earlier.has(d)) {
        causes.push(
          cause(
            `${at}.dependsOn[${j}]`,
            'FieldValueInvalid',
            invalidValue(d, 'must be the id of an earlier resource in the list'),
          ),
        );
      }
    });
    earlier.add(r.id);
  });
  return causes;
}

/**
 * Validates any object: a known apiVersion/kind first, then the kind's schema, the name rules and the
 * cross-field rules of resource lists. Returns no causes when the object is valid.
 */
export function validateObject(obj: unknown): StatusCause[] {
  if (!isRecord(obj)) return [{ message: 'must be an object', reason: 'FieldValueInvalid' }];
  const { info, causes } = typeMeta(obj);
  if (!info) return causes;
  const validate = validatorFor(info);
  const found = validate(obj) ? [] : errorsToCauses(validate.errors ?? [], obj);
  const seen = new Set(found.map((c) => `${c.field}\u0000${c.message}`));
  const extra = [...nameCauses(info, obj.metadata), ...metadataLimitCauses(obj.metadata), ...resourceListCauses(obj)];
  return [...found, ...extra.filter((c) => !seen.has(`${c.field}\u0000${c.message}`))];
}

/**
 * Validates a status write: the object as it would be stored, whose every field but `status` is the stored
 * object's (api/store/object-meta.ts `mergeUpdate`), checked when it was written. So only `status` is checked
 * against the kind's schema, as Kubernetes' validation ratcheting leaves unchanged fields unjudged; this spares each
 * heartbeat and status report checking the whole spec (a Declaration's resources).
 */
export function validateStatusWrite(obj: unknown): StatusCause[] {
  if (!isRecord(obj)) return [{ message: 'must be an object', reason: 'FieldValueInvalid' }];
  const { info, causes } = typeMeta(obj);
  if (!info) return causes;
  const validate = info.hasStatus ? statusValidatorFor(info) : validatorFor(info);
  return validate(obj) ? [] : errorsToCauses(validate.errors ?? [], obj);
}

/**
 * The fields of an object its kind's schema does not declare, each as its path of keys and indexes (e.g.
 * `['spec', 'resources', '0', 'foo']`), for the server's `fieldValidation` (reject, warn or drop them).
 * Empty for an unknown kind. In a `oneOf` without discriminator none of whose branches matches, the fields
 * of each failed branch are reported.
 */
export function unknownFields(obj: Record<string, unknown>): string[][] {
  const info = typeof obj.kind === 'string' ? kindByKind(obj.kind) : undefined;
  if (!info) return [];
  const validate = validatorFor(info);
  if (validate(obj)) return [];
  const seen = new Set<string>();
  const out: string[][] = [];
  for (const e of validate.errors ?? []) {
    if (e.keyword !== 'additionalProperties') continue;
    const parent = e.instancePath === '' ? [] : e.instancePath.slice(1).split('/');
    const path = [...parent.map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')), String(e.params.additionalProperty)];
    const key = JSON.stringify(path);
    if (!seen.has(key)) out.push(path);
    seen.add(key);
  }
  return out;
}

/**
 * Compiles every kind's schema now rather than on first use, e.g. at control-plane start so that the first
 * write does not wait ~0.3 s; throws if a schema does not compile.
 */
export function compileAllSchemas(): void {
  for (const info of KINDS) {
    validatorFor(info);
    if (info.hasStatus) statusValidatorFor(info);
  }
}
