/**
 * The `code` of a Node.js system error (`ENOENT`, `EACCES`, …), read from an `unknown` caught value: the one
 * place that knows the shape of `NodeJS.ErrnoException`.
 */

/** The `code` of a Node system error, or undefined for anything else. */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : undefined;
}

/** True when `e` says a file or directory does not exist (`ENOENT`). */
export function isMissing(e: unknown): boolean {
  return errnoCode(e) === 'ENOENT';
}
