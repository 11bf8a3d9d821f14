/**
 * Equality of plain JSON data (objects, arrays, strings, numbers, booleans, null): the answer isDeepStrictEqual
 * gives for such values, without the generality it pays for on every object (prototypes, symbols, Maps, Dates,
 * …). A subtree both sides share is equal at once: a stored object and the next version a write builds from it
 * share every part the write left alone (api/store/object-meta.ts), so comparing them costs what changed. A key
 * holding undefined counts as present, as in isDeepStrictEqual; NaN equals NaN and 0 does not equal -0,
 * as there (Object.is).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const k of keys) if (!Object.hasOwn(y, k) || !jsonEqual(x[k], y[k])) return false;
  return true;
}
