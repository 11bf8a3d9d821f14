/**
 * The check that the agent's root (every declared path resolves under it) is a directory the agent can
 * write, made at start before anything is touched: without it an agent with a mistyped or unmounted root
 * started anyway and failed every resource with `ENOENT … realpath` naming neither the root nor the flag.
 * The message names where the root came from: the `--root` flag, or the store (the root given at the
 * agent's first start, kept there; a later start cannot change it, identity.ts).
 *
 * `/` is only checked to be a directory: it is the machine itself, which only root may write at its top,
 * so whether a declared path is writable is a question for that path (e.g. one under /home).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { errnoCode } from '../api/meta/errno.ts';

/** Where the root came from: this start's `--root` flag, or the agent's store (its first start). */
export type RootOrigin = 'flag' | 'stored';

/** What is wrong with `root` as the agent's root (e.g. `does not exist`), or undefined when it is usable. */
export function rootProblem(root: string): string | undefined {
  try {
    if (!statSync(root).isDirectory()) return 'is not a directory';
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT') return 'does not exist';
    if (code === 'ENOTDIR') return 'does not exist (a parent is not a directory)';
    return `cannot be read (${code ?? String(e)})`;
  }
  if (root === '/') return undefined;
  try {
    accessSync(root, constants.W_OK | constants.X_OK);
  } catch {
    return `is not writable by this user (uid ${process.getuid?.() ?? '?'})`;
  }
  return undefined;
}

/** The start-up error for an unusable root, naming the flag or the store it came from; undefined when usable. */
export function rootError(root: string, origin: RootOrigin, stateDir: string): string | undefined {
  const problem = rootProblem(root);
  if (problem === undefined) return undefined;
  return origin === 'flag'
    ? `--root ${root} ${problem}: every declared path resolves under it; create it or pass another --root`
    : `the root ${root} (given with --root at the first start of the agent of ${stateDir}, kept in its store) ${problem}: ` +
        `every declared path resolves under it and the agent owns resources there; create it again, or use a new --state-dir`;
}
