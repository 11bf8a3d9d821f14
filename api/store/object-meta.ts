/**
 * How the store stamps server-owned metadata: uid, resourceVersion, generation, timestamps, generateName,
 * and the merge rules of an update (main resource vs `status` subresource). Pure functions: objects are
 * never mutated, new ones are returned (stored objects are shared and immutable).
 */
import { randomInt, randomUUID } from 'node:crypto';
import { jsonEqual } from '../meta/json-equal.ts';
import { rfc3339 } from '../meta/timestamp.ts';
import type { KubeObject, ObjectMeta } from '../meta/types.ts';

/**
 * Metadata fields only the store sets; values in the input are ignored. (`managedFields` is the API server's
 * to compute, api/server/resources/managed-fields.ts: the store keeps what it is given.)
 */
const SERVER_FIELDS = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
] as const;

/** Top-level fields that do not count as "spec" for generation. */
const NOT_SPEC = new Set(['metadata', 'status', 'apiVersion', 'kind']);

/** Kubernetes' alphabet for generated names: no vowels (no words), no 0/1/3 (no look-alikes). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A name for generateName: the prefix plus 5 random characters of Kubernetes' alphabet. */
export function generatedName(prefix: string): string {
  let s = prefix;
  for (let i = 0; i < 5; i++) s += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
  return s;
}

/** True when anything other than metadata, status, apiVersion and kind differs. */
export function specChanged(a: KubeObject, b: KubeObject): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (!NOT_SPEC.has(k) && !jsonEqual(a[k], b[k])) return true;
  return false;
}

/**
 * True when `next` differs from `prev` in nothing but `.status` and `metadata.resourceVersion`: what a write of the
 * status subresource changes (watch events of such changes can be left out: WatchOptions.omitStatusUpdates).
 */
export function onlyStatusChanged(prev: KubeObject, next: KubeObject): boolean {
  if (specChanged(prev, next)) return false;
  const { resourceVersion: _before, ...before } = prev.metadata;
  const { resourceVersion: _after, ...after } = next.metadata;
  return jsonEqual(before, after);
}

function clientMeta(meta: ObjectMeta | undefined): ObjectMeta {
  const m: Record<string, unknown> = { ...(meta ?? {}) };
  for (const f of SERVER_FIELDS) delete m[f];
  return m;
}

/** A new object as created: client metadata plus uid, generation 1 and creationTimestamp (no resourceVersion yet). */
export function stampCreate(input: KubeObject, name: string): KubeObject {
  const metadata: ObjectMeta = {
    ...clientMeta(input.metadata),
    name,
    uid: randomUUID(),
    generation: 1,
    creationTimestamp: rfc3339(),
  };
  return { ...input, metadata };
}

const META_ORDER = [
  'name',
  'generateName',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
];

/** The object with its resourceVersion set and metadata in the usual Kubernetes order (a new object). */
export function withResourceVersion(obj: KubeObject, rv: number): KubeObject {
  const meta = { ...obj.metadata, resourceVersion: String(rv) } as Record<string, unknown>;
  const ordered: Record<string, unknown> = {};
  for (const k of META_ORDER) if (meta[k] !== undefined) ordered[k] = meta[k];
  for (const k of Object.keys(meta)) if (!(k in ordered)) ordered[k] = meta[k];
  return { ...obj, metadata: ordered };
}

/** The object with extra metadata fields (a new object; the input is not touched). */
export function withMeta(obj: KubeObject, meta: Partial<ObjectMeta>): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, ...meta } };
}

/**
 * What an update would store, before resourceVersion and generation are decided: for the main resource, the
 * input with server-owned metadata and `.status` taken from the stored object; for `status`, the stored object
 * with the input's `.status`.
 */
export function mergeUpdate(stored: KubeObject, input: KubeObject, subresource?: 'status'): KubeObject {
  if (subresource === 'status') {
    const next: KubeObject = { ...stored };
    if (input.status !== undefined) next.status = input.status;
    else delete next.status;
    return next;
  }
  const s = stored.metadata;
  const metadata: ObjectMeta = {
    ...clientMeta(input.metadata),
    name: s.name,
    uid: s.uid,
    resourceVersion: s.resourceVersion,
    generation: s.generation,
    creationTimestamp: s.creationTimestamp,
  };
  if (s.deletionTimestamp !== undefined) metadata.deletionTimestamp = s.deletionTimestamp;
  const next: KubeObject = { ...input, metadata };
  delete next.status;
  if (stored.status !== undefined) next.status = stored.status;
  return next;
}

/** `next` with generation bumped when its spec differs from `stored`'s. */
export function withGeneration(stored: KubeObject, next: KubeObject): KubeObject {
  if (!specChanged(stored, next)) return next;
  return withMeta(next, { generation: (stored.metadata.generation ?? 0) + 1 });
}

/** Finalizers present in `next` but not in `stored`. */
export function addedFinalizers(stored: KubeObject, next: KubeObject): string[] {
  const had = new Set(stored.metadata.finalizers ?? []);
  return (next.metadata.finalizers ?? []).filter((f) => !had.has(f));
}

/** True when the object has at least one finalizer. */
export function hasFinalizers(obj: KubeObject): boolean {
  return (obj.metadata.finalizers?.length ?? 0) > 0;
}
