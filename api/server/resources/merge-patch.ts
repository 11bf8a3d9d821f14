/**
 * JSON merge patch (RFC 7386): objects merge key by key, `null` deletes a key, anything else replaces.
 */

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Sets an own property, also for keys like `__proto__` (which must never reach the prototype). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Applies `patch` to `target` and returns the result; neither argument is modified. Only the objects along the
 * patch's paths are copied: the rest of the result is `target`'s own (shared, not cloned), and values taken from
 * the patch are copies.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object') return patch;
  if (!isObject(patch)) return structuredClone(patch);
  // A spread defines properties (an own `__proto__` key of the target stays a plain key), as setOwn does.
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setOwn(out, k, applyMergePatch(Object.hasOwn(out, k) ? out[k] : undefined, v));
  }
  return out;
}
