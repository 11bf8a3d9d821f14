/**
 * Server-side apply (PATCH with `application/apply-patch+yaml`, `?fieldManager=` required, `?force=true`):
 * the configuration's fields become the manager's; a field it applied before and no longer names is removed
 * unless another manager owns it too; setting a field to a value other than the live one while another
 * manager owns it is a conflict — 409 Conflict worded as kube-apiserver's (`Apply failed with 1 conflict:
 * conflict with "kubectl" using …: .spec.site`, one `FieldManagerConflict` cause per field) unless `force`,
 * which takes the field over. Applying to a name that does not exist creates the object (201).
 *
 * The subset (managed-fields.ts): lists are atomic; `status` and metadata other than labels and annotations
 * are not tracked (an apply's `status` is ignored); an object written only by create/update/merge patch has
 * no managedFields, and its first apply finds every field owned by `before-first-apply`, as kube-apiserver
 * does for objects without them. Apply to the `/status` subresource is not served (415).
 */
import { ApiError, isReason, type StatusCause } from '../../meta/api-error.ts';
import type { KubeObject } from '../../meta/types.ts';
import {
  entriesOf,
  entry,
  fieldsOf,
  fromFieldsV1,
  sameAt,
  showPath,
  toFieldsV1,
  type FieldSet,
  type ManagedEntry,
} from './managed-fields.ts';

type Json = Record<string, unknown>;

function isMap(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** How a conflict names a manager (kube's printManager). */
function printManager(e: ManagedEntry): string {
  const name = JSON.stringify(e.manager);
  if (e.operation === 'Apply') return name;
  return `${name} using ${e.apiVersion}${e.time ? ` at ${e.time}` : ''}`;
}

/** The 409 of an apply with conflicts, as kube-apiserver words it. */
export function conflictError(conflicts: { e: ManagedEntry; key: string }[]): ApiError {
  const causes: StatusCause[] = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.e)}`,
    field: showPath(c.key),
  }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0].e)}: ${showPath(conflicts[0].key)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) byManager.set(printManager(c.e), [...(byManager.get(printManager(c.e)) ?? []), c.key]);
    const lines = [...byManager.keys()]
      .sort()
      .flatMap((m) => [`conflicts with ${m}:`, ...byManager.get(m)!.map((k) => `- ${showPath(k)}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError({ reason: 'Conflict', message, details: { causes } });
}

function deleteAt(obj: Json, key: string): void {
  const path = JSON.parse(key) as string[];
  const parents: Json[] = [obj];
  for (const k of path.slice(0, -1)) {
    const next = parents[parents.length - 1][k];
    if (!isMap(next)) return;
    parents.push(next);
  }
  delete parents[parents.length - 1][path[path.length - 1]];
  for (let i = parents.length - 1; i > 0; i--) {
    if (Object.keys(parents[i]).length) break;
    delete parents[i - 1][path[i - 1]];
  }
}

function mergeInto(live: Json, config: Json): void {
  for (const [k, v] of Object.entries(config)) {
    if (isMap(v) && isMap(live[k])) mergeInto(live[k], v);
    else live[k] = structuredClone(v);
  }
}

/** The configuration's part that is written: no apiVersion/kind/status, and of metadata only what a client sets. */
function writable(config: KubeObject): Json {
  const { apiVersion: _a, kind: _k, status: _s, metadata, ...rest } = config;
  const meta: Json = {};
  for (const m of ['labels', 'annotations', 'ownerReferences', 'finalizers'] as const)
    if (metadata[m] !== undefined) meta[m] = metadata[m];
  return { ...rest, metadata: meta };
}

/** What the object becomes when `manager` applies `config` to `stored` (undefined: it is created). */
export function applyConfig(
  stored: KubeObject | undefined,
  config: KubeObject,
  manager: string,
  force: boolean,
): KubeObject {
  const live: KubeObject = stored
    ? structuredClone(stored)
    : { apiVersion: config.apiVersion, kind: config.kind, metadata: { name: config.metadata.name } };
  const mine = fieldsOf(config);
  const entries = stored ? entriesOf(stored) : [];
  const prev = entries.find((e) => e.manager === manager && e.operation === 'Apply');
  const others = entries.filter((e) => e !== prev).map((e) => ({ e, set: fromFieldsV1(e.fieldsV1) }));
  const conflicts = [...mine].flatMap((key) =>
    sameAt(live, config, key) ? [] : others.filter((o) => o.set.has(key)).map((o) => ({ e: o.e, key })),
  );
  if (conflicts.length && !force) throw conflictError(conflicts);
  for (const c of conflicts) others.find((o) => o.e === c.e)!.set.delete(c.key);
  const before: FieldSet = prev ? fromFieldsV1(prev.fieldsV1) : new Set();
  for (const key of before) if (!mine.has(key) && !others.some((o) => o.set.has(key))) deleteAt(live, key);
  mergeInto(live, writable(config));
  const next = others.filter((o) => o.set.size).map((o) => ({ ...o.e, fieldsV1: toFieldsV1(o.set) }));
  if (mine.size) next.push(entry(manager, 'Apply', String(config.apiVersion), mine));
  (live.metadata as { managedFields?: ManagedEntry[] }).managedFields = next;
  return live;
}

/** True for the errors after which an apply is recomputed on the new live object (a write got in between). */
export function isRace(e: unknown): boolean {
  return (
    isReason(e, 'Conflict') && !(e instanceof ApiError && e.details?.causes?.[0]?.reason === 'FieldManagerConflict')
  );
}
