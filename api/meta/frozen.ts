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

/**
 * A frozen copy of `value` as `JSON.parse(JSON.stringify(value))` would make it, sharing every part of it that is
 * already frozen instead of copying it: a frozen object here is a stored or cached one, deep-frozen and plain JSON
 * already (see the file comment). So the next version of a stored object, built from it, shares every part the
 * write left alone (a status write keeps the spec), and copying it costs what changed. The parts copied follow
 * JSON's rules: a key whose value is undefined, a function or a symbol is left out (null in an array), a number
 * that is not finite becomes null and -0 becomes 0, and a value with a toJSON method is copied through JSON.
 */
export function frozenJsonCopy<T>(value: T): T {
  return copyValue(value, false) as T;
}

function copyValue(v: unknown, inArray: boolean): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? v + 0 : null; // v + 0 turns -0 into 0
    case 'object':
      if (v === null || Object.isFrozen(v)) return v;
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return deepFreeze(JSON.parse(JSON.stringify(v)));
      if (Array.isArray(v)) return Object.freeze(v.map((x) => copyValue(x, true)));
      return Object.freeze(copyObject(v as Record<string, unknown>));
    case 'bigint':
      return JSON.parse(JSON.stringify(v)); // throws, as JSON does
    default: // undefined, function, symbol
      return inArray ? null : undefined;
  }
}

function copyObject(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) {
    const x = copyValue(o[k], false);
    if (x !== undefined) out[k] = x;
  }
  return out;
}
