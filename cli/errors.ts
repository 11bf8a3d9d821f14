/**
 * How meshctl reports failures, kubectl-style, and the exit codes it uses:
 *
 *   0  success
 *   1  the operation failed: an error from the server (NotFound, Invalid, …), an unreachable control plane,
 *      an unknown resource type, a manifest that does not parse, a missing meshconfig
 *   2  usage error: unknown command or flag, missing or extra arguments
 *   diff only: 1 means "differences found"; any failure exits 2 (kubectl's "> 1 means error")
 *
 * A stack trace is printed only with MESHCTL_DEBUG=1.
 */
import { ApiError } from '../api/meta/api-error.ts';
import { EXIT_USAGE } from '../api/meta/usage-error.ts';

export { EXIT_USAGE, UsageError } from '../api/meta/usage-error.ts';

/** Exit codes (see the file comment). */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;

/** A failure detected by meshctl itself (not the server), printed as `error: <message>`, exit code 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * Whether `e` is an error of the named class. By name, not instanceof: a command built as its own bundle
 * (`meshctl init`, see hack/build.mjs) throws its own copies of these classes.
 */
function isNamed(e: unknown, name: 'ApiError' | 'UsageError' | 'CliError'): boolean {
  return e instanceof Error && e.name === name;
}

/** Drops the API group from server messages (`nodes.meshctl.dev "a"` → `nodes "a"`), as kubectl shows built-in kinds. */
export function shortenGroup(message: string): string {
  return message.replace(/\b([a-z0-9-]+)\.meshctl\.dev\b/g, '$1');
}

/** The one-line (or, for Invalid, multi-line) kubectl-style text of an error. */
export function formatError(e: unknown, context = ''): string {
  const ctx = context ? `${context}: ` : '';
  if (isNamed(e, 'ApiError')) {
    const api = e as ApiError;
    if (api.details?.causes?.[0]?.reason === 'Unreachable') return `error: ${ctx}${api.message}`;
    const causes = api.reason === 'Invalid' ? (api.details?.causes ?? []) : [];
    if (causes.length) {
      const head = shortenGroup(api.message.replace(/ is invalid:.*$/s, ' is invalid:'));
      return `Error from server (Invalid): ${ctx}${head}\n${causes.map((c) => `  * ${c.field ? `${c.field}: ` : ''}${c.message}`).join('\n')}`;
    }
    return `Error from server (${api.reason}): ${ctx}${shortenGroup(api.message)}`;
  }
  if (isNamed(e, 'UsageError') || isNamed(e, 'CliError')) return `error: ${ctx}${(e as Error).message}`;
  const err = e as Error;
  return `error: ${ctx}${err?.message ?? String(e)}`;
}

/** Whether the stack trace of unexpected errors should be printed. */
export function debugEnabled(): boolean {
  return process.env.MESHCTL_DEBUG === '1' || process.env.MESHCTL_DEBUG === 'true';
}

/** Prints an error to stderr (with the stack when debugging) and returns its exit code. */
export function reportError(e: unknown, command?: string): number {
  process.stderr.write(formatError(e) + '\n');
  const usage = isNamed(e, 'UsageError');
  if (usage) {
    process.stderr.write(`See 'meshctl ${command ? `${command} ` : ''}--help' for usage.\n`);
  }
  const known = usage || isNamed(e, 'ApiError') || isNamed(e, 'CliError');
  if (debugEnabled() && e instanceof Error && e.stack) process.stderr.write(e.stack + '\n');
  else if (!known) process.stderr.write('(set MESHCTL_DEBUG=1 to see where this happened)\n');
  return usage ? EXIT_USAGE : EXIT_FAILED;
}
