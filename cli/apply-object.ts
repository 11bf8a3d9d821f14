/**
 * Client-side apply of one manifest object, as kubectl does it: create when absent; otherwise a JSON merge
 * patch computed from the last-applied manifest (kept in the `meshctl.dev/last-applied` annotation), the
 * new manifest and the live object, sent with the live resourceVersion as a precondition and retried on
 * Conflict. Also used by `diff` (with dry run) to compute what apply would produce.
 */
import type { Client } from '../api/client/types.ts';
import { ApiError, isReason } from '../api/meta/api-error.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { KindInfo } from '../api/v1alpha1/kind-info.ts';
import { isObject, threeWayMergePatch, type JsonObject } from './merge-patch.ts';

/** The annotation holding the manifest last applied (like `kubectl.kubernetes.io/last-applied-configuration`). */
export const LAST_APPLIED = 'meshctl.dev/last-applied';

/** What apply did to one object. */
export type ApplyAction = 'created' | 'configured' | 'unchanged';

/** The outcome of applying one object. */
export interface ApplyResult {
  action: ApplyAction;
  /** The object as the server returned it (or the live one when unchanged). */
  object: KubeObject;
  /** The live object before apply (undefined when it was created). */
  live?: KubeObject;
}

const SERVER_FIELDS = [
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'generation',
  'managedFields',
  'selfLink',
];
const CONFLICT_RETRIES = 5;

/**
 * The object apply sends: the manifest without `status` and server-set metadata, with the last-applied
 * annotation holding exactly that (minus the annotation itself).
 */
export function desiredObject(manifest: KubeObject): KubeObject {
  const clean = structuredClone(manifest);
  delete clean.status;
  const meta = clean.metadata as Record<string, unknown>;
  for (const f of SERVER_FIELDS) delete meta[f];
  const annotations = { ...(clean.metadata.annotations ?? {}) };
  delete annotations[LAST_APPLIED];
  if (Object.keys(annotations).length) clean.metadata.annotations = annotations;
  else delete clean.metadata.annotations;
  const lastApplied = JSON.stringify(sortKeys(clean));
  return { ...clean, metadata: { ...clean.metadata, annotations: { ...annotations, [LAST_APPLIED]: lastApplied } } };
}

/** A copy with object keys sorted, so the annotation does not change when a manifest's keys are reordered. */
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortKeys(v[k])]),
  );
}

/** The manifest recorded by the last apply, or undefined (created otherwise, or unreadable). */
export function lastApplied(live: KubeObject): JsonObject | undefined {
  const text = live.metadata?.annotations?.[LAST_APPLIED];
  if (!text) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The merge patch that makes `live` what `desired` asks for; `{}` when nothing would change. */
export function applyPatch(desired: KubeObject, live: KubeObject): JsonObject {
  return threeWayMergePatch(lastApplied(live), desired, live);
}

/** Fetches an object, or undefined when it does not exist. */
export async function getIfExists(client: Client, plural: string, name: string): Promise<KubeObject | undefined> {
  try {
    return await client.get(plural, name);
  } catch (e) {
    if (isReason(e, 'NotFound')) return undefined;
    throw e;
  }
}

/**
 * Applies one manifest object; rejects with the server's ApiError (Invalid, Forbidden, …). `check` sees the live
 * object first and may throw to leave it alone (apply --prune refuses members of another applyset).
 */
export async function applyObject(
  client: Client,
  kind: KindInfo,
  manifest: KubeObject,
  opts: { dryRun?: boolean; check?: (live: KubeObject) => void } = {},
): Promise<ApplyResult> {
  const desired = desiredObject(manifest);
  const name = desired.metadata.name as string;
  const writeOpts = { dryRun: opts.dryRun };
  let lastError: unknown;
  for (let attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
    const live = await getIfExists(client, kind.plural, name);
    if (live) opts.check?.(live);
    try {
      if (!live) return { action: 'created', object: await client.create(kind.plural, desired, writeOpts) };
      const patch = applyPatch(desired, live);
      if (!Object.keys(patch).length) return { action: 'unchanged', object: live, live };
      const metaPatch = isObject(patch.metadata) ? patch.metadata : {};
      patch.metadata = { ...metaPatch, resourceVersion: live.metadata.resourceVersion };
      return { action: 'configured', object: await client.patch(kind.plural, name, patch, writeOpts), live };
    } catch (e) {
      // AlreadyExists: created meanwhile; Conflict: changed meanwhile. Both: look again.
      if (!isReason(e, 'Conflict') && !isReason(e, 'AlreadyExists')) throw e;
      lastError = e;
    }
  }
  throw lastError instanceof ApiError ? lastError : new Error(String(lastError));
}
