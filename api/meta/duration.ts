/**
 * Go-style durations (`time.ParseDuration`), the one grammar for every duration meshctl reads: flags
 * (`--reconcile-interval 1m30s`), `Mesh.spec.reachabilityGracePeriod`, `JoinToken.spec.ttl`. A sequence of
 * decimal numbers, each with an optional fraction and a unit: `1h30m`, `1m30s`, `250ms`, `1.5h`, `.5s`.
 * Units: ns, us (µs, μs), ms, s, m, h. Unlike Go, no sign: every duration here is a length of time. Range
 * checks (at least 10ms, positive, …) belong to the caller.
 */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
// µs and μs (micro sign, Greek mu) as escapes: esbuild keeps a regular expression's characters as written, and one
// non-ASCII character makes V8 hold meshctl's whole bundle as a two-byte string (hack/build.mjs, bench/RESULTS.md §3).
const PART = /(\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;

/** Options of `parseDuration`. */
export interface ParseDurationOptions {
  /** Accept a zero duration (`0`, `0s`); by default it is refused. */
  allowZero?: boolean;
}

/**
 * Parses a Go duration into milliseconds (fractions of a millisecond are kept). Throws an Error that names
 * the input (`invalid duration "5x": …`) when it is not one, or when it is zero and `allowZero` is not set.
 */
export function parseDuration(text: string, opts: ParseDurationOptions = {}): number {
  const ms = text === '0' ? 0 : sumParts(text);
  if (ms === undefined) {
    throw new Error(
      `invalid duration "${text}": expected numbers with units such as 1h30m, 90s or 250ms (units ns, us, ms, s, m, h)`,
    );
  }
  if (ms === 0 && !opts.allowZero) throw new Error(`invalid duration "${text}": must be greater than zero`);
  return ms;
}

/** The sum of `text`'s number-unit parts in ms, or undefined unless the parts make up all of it. */
function sumParts(text: string): number | undefined {
  if (text === '') return undefined;
  PART.lastIndex = 0;
  let ms = 0;
  while (PART.lastIndex < text.length) {
    const m = PART.exec(text);
    if (!m) return undefined;
    ms += Number(m[1]) * UNIT_MS[m[2]];
  }
  return ms;
}
