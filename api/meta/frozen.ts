/**
 * Deep freezing of shared objects. Stored objects are frozen (api/store/state.ts): the store shares them with every
 * reader (lists, watch events, the controllers' informers in the control plane's process), so one that changed one
 * in place would change what everyone else sees. So are the objects an informer caches (api/client/informer.ts),
 * which its handlers share. Frozen, such a write throws a TypeError where it is made (ES modules are strict)
 * instead of corrupting the shared object quietly. A reader that needs to change an object changes a copy.
 */

/** Freezes `value` and everything it holds (plain JSON data: objects and arrays); returns it. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}
