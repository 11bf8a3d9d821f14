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

/**
 * A copy of `value` as `JSON.parse(JSON.stringify(value))` would make it (the rules of frozenJsonCopy), none of it
 * frozen or shared with `value`: the caller may change it.
 */
export function jsonCopy<T>(value: T): T {
  return copyValue(value, false, false) as T;
}

/**
 * The JSON text of the frozen objects written last (the store makes it for its journal: state.ts), in two
 * generations of RECENT_TEXTS each: an answer follows its write within a turn or two of the event loop, and older
 * texts are let go rather than kept for every stored object (5,000 Nodes' texts would be some 10 MB).
 */
const RECENT_TEXTS = 1024;
let recentTexts = new WeakMap<object, string>();
let olderTexts = new WeakMap<object, string>();
let recentCount = 0;

/**
 * Records `json` as the JSON text of `frozen`, a deep-frozen object that `JSON.parse(json)` equals (the store's
 * copy of an object and the journal line it wrote), so that `jsonText` answers with it instead of encoding again.
 */
export function rememberJsonText(frozen: object, json: string): void {
  if (!Object.isFrozen(frozen)) return;
  if (++recentCount > RECENT_TEXTS) {
    olderTexts = recentTexts;
    recentTexts = new WeakMap();
    recentCount = 1;
  }
  recentTexts.set(frozen, json);
}

/**
 * `JSON.stringify(value)`, reusing the text recorded for it (rememberJsonText): an object just stored, answered to a
 * client over HTTPS, is encoded once for the journal and not again for the answer. Being frozen, the object cannot
 * have changed since.
 */
export function jsonText(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  return recentTexts.get(value) ?? olderTexts.get(value) ?? JSON.stringify(value);
}

function copyValue(v: unknown, inArray: boolean, freeze = true): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? v + 0 : null; // v + 0 turns -0 into 0
    case 'object': {
      if (v === null || (freeze && Object.isFrozen(v))) return v;
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') {
        const viaJson: unknown = JSON.parse(JSON.stringify(v));
        return freeze ? deepFreeze(viaJson) : viaJson;
      }
      const copy = Array.isArray(v)
        ? v.map((x) => copyValue(x, true, freeze))
        : copyObject(v as Record<string, unknown>, freeze);
      return freeze ? Object.freeze(copy) : copy;
    }
    case 'bigint':
      return JSON.parse(JSON.stringify(v)); // throws, as JSON does
    default: // undefined, function, symbol
      return inArray ? null : undefined;
  }
}

function copyObject(o: Record<string, unknown>, freeze: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) {
    const x = copyValue(o[k], false, freeze);
    if (x === undefined) continue;
    // An own `__proto__` key (JSON.parse makes one) stays a key: assigned, it would set the copy's prototype.
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    else out[k] = x;
  }
  return out;
}
