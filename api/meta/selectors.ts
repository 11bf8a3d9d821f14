/**
 * Kubernetes label and field selectors: parsing (errors are ApiError BadRequest) and matching objects.
 * Label selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x)`, joined by commas.
 * Field selectors: `path=value`, `path==value`, `path!=value` on any dotted path (`metadata.name`, `spec.node`).
 */
import { ApiError } from './api-error.ts';
import type { KubeObject } from './types.ts';

/** One term of a label selector. */
export interface LabelRequirement {
  key: string;
  op: 'eq' | 'neq' | 'in' | 'notin' | 'exists' | 'notexists';
  values: readonly string[];
}

/** One term of a field selector. */
export interface FieldRequirement {
  path: readonly string[];
  op: 'eq' | 'neq';
  value: string;
}

/** A parsed label selector: every requirement must hold (an empty one matches everything). */
export type LabelSelector = readonly LabelRequirement[];
/** A parsed field selector: every requirement must hold (an empty one matches everything). */
export type FieldSelector = readonly FieldRequirement[];

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KEY_CHARS = '[^\\s=!(),]+';
const SET_TERM = new RegExp(`^(${KEY_CHARS})\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const NOT_EXISTS_TERM = new RegExp(`^!\\s*(${KEY_CHARS})$`);
const OP_TERM = new RegExp(`^(${KEY_CHARS})\\s*(==|=|!=)\\s*([^\\s=!(),]*)$`);
const EXISTS_TERM = new RegExp(`^(${KEY_CHARS})$`);

function bad(selector: string, why: string): ApiError {
  return ApiError.badRequest(`unable to parse selector "${selector}": ${why}`);
}

/** Splits on commas that are not inside parentheses. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') depth++;
    else if (c === ')' && --depth < 0) throw bad(selector, `unbalanced ")" at position ${i}`);
    else if (c === ',' && depth === 0) {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw bad(selector, 'unbalanced "(": missing ")"');
  terms.push(selector.slice(start));
  return terms.map((t) => t.trim());
}

function checkKey(selector: string, key: string): void {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length > 253 || !PREFIX.test(prefix))) {
    throw bad(selector, `invalid label key "${key}": prefix must be a DNS subdomain`);
  }
  if (!NAME.test(name)) {
    throw bad(
      selector,
      `invalid label key "${key}": name must be 1-63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`,
    );
  }
}

function checkValue(selector: string, value: string): void {
  if (value !== '' && !NAME.test(value)) {
    throw bad(
      selector,
      `invalid label value "${value}": must be empty or 1-63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`,
    );
  }
}

function parseLabelTerm(selector: string, term: string): LabelRequirement {
  let m = SET_TERM.exec(term);
  if (m) {
    const values = m[3].split(',').map((v) => v.trim());
    if (values.length === 1 && values[0] === '')
      throw bad(selector, `"${term}": the set of values for '${m[2]}' must not be empty`);
    values.forEach((v) => checkValue(selector, v));
    return { key: m[1], op: m[2] as 'in' | 'notin', values };
  }
  if ((m = NOT_EXISTS_TERM.exec(term))) return { key: m[1], op: 'notexists', values: [] };
  if ((m = OP_TERM.exec(term))) {
    checkValue(selector, m[3]);
    return { key: m[1], op: m[2] === '!=' ? 'neq' : 'eq', values: [m[3]] };
  }
  if ((m = EXISTS_TERM.exec(term))) return { key: m[1], op: 'exists', values: [] };
  throw bad(
    selector,
    `"${term}" is not a requirement (expected key, !key, key=value, key!=value, key in (a,b) or key notin (a,b))`,
  );
}

/** Parses a label selector; throws ApiError BadRequest with a readable message when it is malformed. */
export function parseLabelSelector(selector: string): LabelSelector {
  if (selector.trim() === '') return [];
  return splitTerms(selector).map((term) => {
    if (term === '') throw bad(selector, 'empty requirement (stray comma?)');
    const req = parseLabelTerm(selector, term);
    checkKey(selector, req.key);
    return req;
  });
}

const FIELD_TERM = /^([^\s=!]+)\s*(==|=|!=)\s*(.*)$/;
const PATH_PART = /^[A-Za-z0-9_-]+$/;

/** Parses a field selector; throws ApiError BadRequest with a readable message when it is malformed. */
export function parseFieldSelector(selector: string): FieldSelector {
  if (selector.trim() === '') return [];
  return selector.split(',').map((raw) => {
    const term = raw.trim();
    const m = FIELD_TERM.exec(term);
    if (!m) throw bad(selector, `"${term}" is not a requirement (expected path=value, path==value or path!=value)`);
    const path = m[1].split('.');
    if (!path.every((p) => PATH_PART.test(p)))
      throw bad(selector, `invalid field path "${m[1]}": expected dotted names like spec.node`);
    return { path, op: m[2] === '!=' ? 'neq' : 'eq', value: m[3].trim() };
  });
}

function labelHolds(labels: Record<string, string>, r: LabelRequirement): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  switch (r.op) {
    case 'eq':
      return has && labels[r.key] === r.values[0];
    case 'neq':
      return !(has && labels[r.key] === r.values[0]);
    case 'in':
      return has && r.values.includes(labels[r.key]);
    case 'notin':
      return !(has && r.values.includes(labels[r.key]));
    case 'exists':
      return has;
    case 'notexists':
      return !has;
  }
}

/** The value at a dotted path as a field selector compares it: strings as is, numbers/booleans as text, absent as ''. */
function fieldText(obj: unknown, path: readonly string[]): string {
  let cur: unknown = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[p];
  }
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur);
}

/** True when the object's labels satisfy the selector. */
export function matchesLabels(obj: KubeObject, selector: LabelSelector): boolean {
  if (selector.length === 0) return true;
  const labels = obj.metadata?.labels ?? {};
  return selector.every((r) => labelHolds(labels, r));
}

/** True when the object's fields satisfy the selector. */
export function matchesFields(obj: KubeObject, selector: FieldSelector): boolean {
  return selector.every((r) => (fieldText(obj, r.path) === r.value) === (r.op === 'eq'));
}

/** The object name a field selector requires (`metadata.name=X` or `==X`), if any: only that object can match. */
export function requiredName(field: FieldSelector): string | undefined {
  const r = field.find((f) => f.op === 'eq' && f.path.length === 2 && f.path[0] === 'metadata' && f.path[1] === 'name');
  return r?.value;
}

/** True when the object matches both selectors (given as text or parsed; absent ones match everything). */
export function matchesSelectors(
  obj: KubeObject,
  label?: string | LabelSelector,
  field?: string | FieldSelector,
): boolean {
  const l = typeof label === 'string' ? parseLabelSelector(label) : label;
  const f = typeof field === 'string' ? parseFieldSelector(field) : field;
  return (l === undefined || matchesLabels(obj, l)) && (f === undefined || matchesFields(obj, f));
}
