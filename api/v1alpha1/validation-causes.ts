/**
 * Turns ajv errors into Kubernetes-style field causes that read well for people:
 * `{ field: 'spec.resources[2].spec.path', reason: 'FieldValueInvalid', message: "must be an absolute path such as '/srv/web'" }`.
 */
import type { ErrorObject } from 'ajv';
import type { StatusCause } from '../meta/api-error.ts';
import { didYouMean } from '../meta/did-you-mean.ts';

/** The Kubernetes cause reasons validation produces. */
export type CauseReason =
  'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueNotSupported' | 'FieldValueTooLong' | 'FieldValueDuplicate';

/** Builds one cause. */
export function cause(field: string, reason: CauseReason, message: string): StatusCause {
  return { field, message, reason };
}

/** The dotted field path (`spec.resources[2].spec.path`) of a JSON pointer into `root`. */
export function fieldPath(root: unknown, pointer: string): string {
  const segments =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = '';
  let cur: unknown = root;
  for (const seg of segments) {
    path = appendField(path, seg, Array.isArray(cur));
    cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[seg] : undefined;
  }
  return path;
}

/** Appends one key or index to a dotted path: `.name`, `[3]` for an index, `[odd/key]` for other map keys. */
export function appendField(path: string, key: string, isIndex = false): string {
  if (isIndex || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** A message naming the rejected value, as Kubernetes words it: `Invalid value: "Web": must be …`. */
export function invalidValue(value: unknown, why: string): string {
  return `Invalid value: ${show(value)}: ${why}`;
}

function supported(values: readonly unknown[]): string {
  return `supported values: ${values.map(show).join(', ')}`;
}

/** The schema's own wording for a failed pattern, format or `not`, if it has one. */
function customMessage(err: ErrorObject): string | undefined {
  const holder = err.keyword === 'not' ? err.schema : err.parentSchema;
  const text =
    holder !== null && typeof holder === 'object' ? (holder as Record<string, unknown>)['x-message'] : undefined;
  return typeof text === 'string' ? text : undefined;
}

/** The `kind` values a discriminated `oneOf` accepts. */
function discriminatorValues(err: ErrorObject, tag: string): unknown[] {
  const branches = (err.parentSchema as { oneOf?: { properties?: Record<string, { const?: unknown }> }[] } | undefined)
    ?.oneOf;
  return (branches ?? []).map((b) => b.properties?.[tag]?.const).filter((v) => v !== undefined);
}

type Params = Record<string, unknown>;
type Translate = (err: ErrorObject, at: string, p: Params) => StatusCause | undefined;

function discriminatorCause(err: ErrorObject, at: string, p: Params): StatusCause {
  const tag = String(p.tag);
  const field = appendField(at, tag);
  if (p.error === 'mapping') {
    return cause(
      field,
      'FieldValueNotSupported',
      `Unsupported value: ${show(p.tagValue)}: ${supported(discriminatorValues(err, tag))}`,
    );
  }
  const missing = (err.data as Record<string, unknown> | undefined)?.[tag] === undefined;
  return missing
    ? cause(field, 'FieldValueRequired', 'Required value')
    : cause(field, 'FieldValueInvalid', 'must be string');
}

function duplicateCause(err: ErrorObject, at: string, p: Params): StatusCause {
  const later = Math.max(Number(p.i), Number(p.j));
  const item = Array.isArray(err.data) ? err.data[later] : undefined;
  return cause(appendField(at, String(later), true), 'FieldValueDuplicate', `Duplicate value: ${show(item)}`);
}

/** A value out of its pattern, format or range: named, with the schema's wording when it has one. */
const invalid: Translate = (err, at) =>
  cause(at, 'FieldValueInvalid', invalidValue(err.data, customMessage(err) ?? err.message ?? err.keyword));

/** How each ajv keyword's failure reads; keywords not listed give ajv's own message. */
const BY_KEYWORD: Record<string, Translate> = {
  required: (_e, at, p) => cause(appendField(at, String(p.missingProperty)), 'FieldValueRequired', 'Required value'),
  additionalProperties: (e, at, p) => {
    const field = appendField(at, String(p.additionalProperty));
    const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
    const hint = didYouMean(
      field,
      known.map((k) => appendField(at, k)),
    );
    return cause(field, 'FieldValueNotSupported', `unknown field ${show(field)}${hint}`);
  },
  enum: (e, at, p) =>
    cause(
      at,
      'FieldValueNotSupported',
      `Unsupported value: ${show(e.data)}: ${supported(p.allowedValues as unknown[])}`,
    ),
  const: (e, at, p) =>
    cause(at, 'FieldValueNotSupported', `Unsupported value: ${show(e.data)}: ${supported([p.allowedValue])}`),
  discriminator: discriminatorCause,
  uniqueItems: duplicateCause,
  maxLength: (_e, at, p) => cause(at, 'FieldValueTooLong', `may not be longer than ${String(p.limit)} characters`),
  minItems: (_e, at, p) =>
    cause(at, 'FieldValueRequired', `must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`),
  pattern: invalid,
  format: invalid,
  minimum: invalid,
  maximum: invalid,
  exclusiveMinimum: invalid,
  exclusiveMaximum: invalid,
  // "must be integer"; with the schema's own wording when it has one (a mode written as 644, not "0644")
  type: (e, at, p) => {
    const custom = customMessage(e);
    return cause(
      at,
      'FieldValueInvalid',
      custom ? invalidValue(e.data, custom) : (e.message ?? `must be ${String(p.type)}`),
    );
  },
  // repeated by the errors inside them
  propertyNames: () => undefined,
  if: () => undefined,
};

/** One ajv error as a cause, or undefined for errors that only repeat others. */
export function errorToCause(err: ErrorObject, root: unknown): StatusCause | undefined {
  const at = fieldPath(root, err.instancePath);
  if (err.propertyName !== undefined) {
    return cause(
      at,
      'FieldValueInvalid',
      `invalid key ${show(err.propertyName)}: ${customMessage(err) ?? err.message}`,
    );
  }
  const translate = Object.hasOwn(BY_KEYWORD, err.keyword) ? BY_KEYWORD[err.keyword] : undefined;
  if (translate) return translate(err, at, err.params as Params);
  return cause(at, 'FieldValueInvalid', customMessage(err) ?? err.message ?? `failed ${err.keyword}`);
}

/** Every distinct cause of a list of ajv errors, in the order ajv found them. */
export function errorsToCauses(errors: readonly ErrorObject[], root: unknown): StatusCause[] {
  const seen = new Set<string>();
  const out: StatusCause[] = [];
  for (const err of errors) {
    const c = errorToCause(err, root);
    if (!c) continue;
    const key = `${c.field}\u0000${c.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(c);
    }
  }
  return out;
}
