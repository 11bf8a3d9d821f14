/**
 * JSON merge patches (RFC 7386) for `apply`: computing the patch that turns the live object into what the
 * manifest asks for, the way kubectl's client-side apply does it for custom resources
 * (`CreateThreeWayJSONMergePatch`): fields the manifest changed or added are set, fields that were in the
 * last-applied manifest but are gone from the new one are deleted (`null`), and fields the manifest never
 * mentioned (set by the server or by others) are left alone. Lists are replaced whole.
 */
import { isDeepStrictEqual } from 'node:util';

/** A JSON object (not an array, not null). */
export type JsonObject = Record<string, unknown>;

/** True for plain JSON objects. */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The patch setting every field of `modified` that differs from `current` (no deletions). */
export function changesPatch(current: unknown, modified: JsonObject): JsonObject {
  const patch: JsonObject = {};
  const cur = isObject(current) ? current : {};
  for (const [k, v] of Object.entries(modified)) {
    const has = Object.prototype.hasOwnProperty.call(cur, k);
    if (v === null ? !has : has && isDeepStrictEqual(cur[k], v)) continue;
    if (isObject(v) && isObject(cur[k])) {
      const sub = changesPatch(cur[k], v);
      if (Object.keys(sub).length) patch[k] = sub;
    } else {
      patch[k] = v;
    }
  }
  return patch;
}

/** The patch deleting (`null`) every field of `original` that `modified` no longer has. */
export function deletionsPatch(original: JsonObject, modified: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const [k, v] of Object.entries(original)) {
    if (!Object.prototype.hasOwnProperty.call(modified, k)) {
      patch[k] = null;
    } else if (isObject(v) && isObject(modified[k])) {
      const sub = deletionsPatch(v, modified[k]);
      if (Object.keys(sub).length) patch[k] = sub;
    }
  }
  return patch;
}

/** Merges two patches (right wins on conflicts, nested objects are merged). */
export function mergePatches(a: JsonObject, b: JsonObject): JsonObject {
  const out: JsonObject = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isObject(v) && isObject(out[k]) ? mergePatches(out[k], v) : v;
  return out;
}

/**
 * The three-way merge patch of client-side apply: deletions from `original` (the last-applied manifest, or
 * undefined when there is none) to `modified` (the new manifest), plus changes from `current` (the live
 * object) to `modified`. An empty object means "unchanged".
 */
export function threeWayMergePatch(
  original: JsonObject | undefined,
  modified: JsonObject,
  current: JsonObject,
): JsonObject {
  const deletions = original ? deletionsPatch(original, modified) : {};
  return mergePatches(deletions, changesPatch(current, modified));
}

/** Applies a JSON merge patch (RFC 7386) to a value, returning a new value. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}
