/**
 * Field ownership for server-side apply: which manager owns which fields of an object, kept in
 * `metadata.managedFields` as kube-apiserver writes it (`fieldsType: FieldsV1`, `f:<name>` keys, `.` for a
 * map the manager set). Our subset: a field is a leaf — a scalar, a list (lists are atomic, as in a CRD
 * without list-type markers) or an empty map; the tracked fields are everything but `apiVersion`, `kind`,
 * `status` and `metadata`, plus `metadata.labels.*` and `metadata.annotations.*`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../meta/types.ts';
import { rfc3339 } from '../../meta/timestamp.ts';

/** One manager's fields: a set of leaf paths, each a JSON array of keys. */
export type FieldSet = Set<string>;

/** A `metadata.managedFields` entry. */
export interface ManagedEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** The manager kube-apiserver names as the owner of every field of an object that has no managedFields yet. */
export const BEFORE_FIRST_APPLY = 'before-first-apply';

type Json = Record<string, unknown>;

function isMap(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function leaves(v: unknown, path: string[], out: FieldSet): void {
  if (isMap(v) && Object.keys(v).length > 0) {
    for (const [k, child] of Object.entries(v)) leaves(child, [...path, k], out);
  } else out.add(JSON.stringify(path));
}

/** The tracked leaf fields of an object (or of an apply configuration). */
export function fieldsOf(obj: Json): FieldSet {
  const out: FieldSet = new Set();
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'status') continue;
    if (k !== 'metadata') leaves(v, [k], out);
    else if (isMap(v)) {
      for (const m of ['labels', 'annotations']) if (isMap(v[m])) leaves(v[m], ['metadata', m], out);
    }
  }
  return out;
}

/** The value at a path, or undefined. */
export function valueAt(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const k of path) cur = isMap(cur) ? cur[k] : undefined;
  return cur;
}

/** A leaf path as kube prints it in conflicts: `.spec.site`, `.metadata.labels.role`. */
export function showPath(key: string): string {
  return (JSON.parse(key) as string[]).map((k) => `.${k}`).join('');
}

/** A field set in FieldsV1 form. */
export function toFieldsV1(set: FieldSet): Json {
  const root: Json = {};
  for (const key of [...set].sort()) {
    let node = root;
    const path = JSON.parse(key) as string[];
    path.forEach((k, i) => {
      const f = `f:${k}`;
      if (!isMap(node[f])) node[f] = {};
      node = node[f] as Json;
      if (i < path.length - 1 && !(i === 0 && k === 'metadata')) node['.'] = {};
    });
  }
  return root;
}

/** A FieldsV1 value as a field set; a node without `f:` children is a leaf (other key kinds are not read). */
export function fromFieldsV1(fields: unknown, path: string[] = [], out: FieldSet = new Set()): FieldSet {
  const children = isMap(fields) ? Object.keys(fields).filter((k) => k.startsWith('f:')) : [];
  if (!children.length) {
    if (path.length) out.add(JSON.stringify(path));
    return out;
  }
  for (const k of children) fromFieldsV1((fields as Json)[k], [...path, k.slice(2)], out);
  return out;
}

/** An object's entries; one that has none yet has every field owned by `before-first-apply`. */
export function entriesOf(obj: KubeObject): ManagedEntry[] {
  const managed = (obj.metadata as { managedFields?: ManagedEntry[] }).managedFields;
  if (Array.isArray(managed) && managed.length) return managed;
  const set = fieldsOf(obj);
  return set.size ? [entry(BEFORE_FIRST_APPLY, 'Update', String(obj.apiVersion), set)] : [];
}

/** True when the object's fields are tracked (it has managedFields: it has been applied server-side). */
export function isTracked(obj: KubeObject): boolean {
  const managed = (obj.metadata as { managedFields?: unknown }).managedFields;
  return Array.isArray(managed) && managed.length > 0;
}

/** A new entry. */
export function entry(
  manager: string,
  operation: ManagedEntry['operation'],
  apiVersion: string,
  set: FieldSet,
): ManagedEntry {
  return { manager, operation, apiVersion, time: rfc3339(), fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(set) };
}

/**
 * The entries after a non-apply write (update, merge or JSON patch) of a tracked object by `manager`: the
 * fields it set or changed become its own (an `Update` entry) and no other manager's; removed fields are
 * nobody's. Entries left with no field are dropped.
 */
export function entriesAfterUpdate(before: KubeObject, after: Json, manager: string): ManagedEntry[] {
  const old = fieldsOf(before);
  const now = fieldsOf(after);
  const changed = [...now].filter((k) => !old.has(k) || !sameAt(before, after, k));
  const gone = new Set([...old].filter((k) => !now.has(k)));
  const taken = new Set([...changed, ...gone]);
  const out: ManagedEntry[] = [];
  let mine: FieldSet = new Set(changed);
  for (const e of entriesOf(before)) {
    const set = fromFieldsV1(e.fieldsV1);
    for (const k of taken) set.delete(k);
    if (e.manager === manager && e.operation === 'Update') mine = new Set([...set, ...changed]);
    else if (set.size) out.push({ ...e, fieldsV1: toFieldsV1(set) });
  }
  if (mine.size) out.push(entry(manager, 'Update', String(after.apiVersion), mine));
  return out;
}

/** True when both objects hold the same value at a leaf path. */
export function sameAt(a: unknown, b: unknown, key: string): boolean {
  const path = JSON.parse(key) as string[];
  return isDeepStrictEqual(valueAt(a, path), valueAt(b, path));
}
