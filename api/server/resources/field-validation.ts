/**
 * Server-side field validation, `?fieldValidation=Strict|Warn|Ignore`, as kube-apiserver does it: Strict
 * refuses unknown fields with 400 BadRequest (`Node in version "v1alpha1" cannot be handled as a Node: strict
 * decoding error: unknown field "spec.foo"`), Warn drops them and says so in a `Warning` header
 * (`unknown field "spec.foo"`), Ignore drops them silently. kubectl sends Strict by default, Warn for
 * `--validate=warn` and Ignore for `--validate=false`. Without the parameter an unknown field is left to
 * schema validation, which refuses it with 422 Invalid and suggests the field it is probably a typo of.
 */
import { ApiError } from '../../meta/api-error.ts';
import { VERSION } from '../../meta/types.ts';
import type { KindInfo } from '../../v1alpha1/kind-info.ts';
import { unknownFields } from '../../v1alpha1/validate.ts';
import { fieldPath } from '../../v1alpha1/validation-causes.ts';

/** What to do with unknown fields. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

const MODES: readonly string[] = ['Ignore', 'Warn', 'Strict'];

/** `?fieldValidation=`; undefined when absent; 400 for any other value. */
export function fieldValidationParam(query: URLSearchParams): FieldValidation | undefined {
  const v = query.get('fieldValidation');
  if (v === null || v === '') return undefined;
  if (MODES.includes(v)) return v as FieldValidation;
  throw ApiError.badRequest(`fieldValidation must be one of "Ignore", "Warn" or "Strict", not ${JSON.stringify(v)}`);
}

function pointer(path: string[]): string {
  return '/' + path.map((k) => k.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

function removeAt(obj: Record<string, unknown>, path: string[]): void {
  let cur: unknown = obj;
  for (const k of path.slice(0, -1))
    cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[k] : undefined;
  if (cur !== null && typeof cur === 'object') delete (cur as Record<string, unknown>)[path[path.length - 1]];
}

/**
 * Applies the mode to a body about to be written (an object, a patched object or an apply configuration):
 * throws for Strict, drops the unknown fields for Warn and Ignore (the body is changed). Returns the
 * warnings to send.
 */
export function checkUnknownFields(
  info: KindInfo,
  body: Record<string, unknown>,
  mode: FieldValidation | undefined,
): string[] {
  if (mode === undefined) return [];
  const unknown = unknownFields(body);
  if (!unknown.length) return [];
  const texts = unknown.map((p) => `unknown field ${JSON.stringify(fieldPath(body, pointer(p)))}`);
  if (mode === 'Strict') {
    throw ApiError.badRequest(
      `${info.kind} in version "${VERSION}" cannot be handled as a ${info.kind}: strict decoding error: ${texts.join(', ')}`,
    );
  }
  for (const p of unknown) removeAt(body, p);
  return mode === 'Warn' ? texts : [];
}
