/**
 * Resolves a declared absolute path under the agent's root, refusing any path that escapes it
 * (`..` segments, or a symlink in an existing parent that points outside the root). A path the kernel
 * follows to its end (a working directory) is checked with its last component followed too, at each use.
 */
import { realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { errnoCode, isMissing } from '../../api/meta/errno.ts';

/** The error thrown for a declared path that is malformed or escapes the root. */
export class PathEscapesRootError extends Error {
  constructor(path: string, root: string, why: string) {
    super(`path ${JSON.stringify(path)} is not allowed under root ${JSON.stringify(root)}: ${why}`);
    this.name = 'PathEscapesRootError';
  }
}

/**
 * Joins `path` (absolute, as declared) under `root` lexically; throws for relative paths, `..` segments
 * and NUL bytes. Does not look at the file system.
 */
export function joinUnderRoot(root: string, path: string): string {
  if (typeof path !== 'string' || path === '') throw new PathEscapesRootError(String(path), root, 'empty path');
  if (path.includes('\0')) throw new PathEscapesRootError(path, root, 'contains a NUL byte');
  if (!path.startsWith('/')) throw new PathEscapesRootError(path, root, 'must be absolute');
  if (path.split('/').includes('..')) throw new PathEscapesRootError(path, root, "contains a '..' segment");
  const joined = join(root, path);
  return joined.length > 1 && joined.endsWith(sep) ? joined.slice(0, -1) : joined;
}

const realRoots = new Map<string, string>();

/**
 * Resolves `path` under `root` and checks, with the realpath of the deepest existing ancestor of its
 * parent, that no symlink leads outside the root. Rejects with `PathEscapesRootError` otherwise.
 * The final component itself is not followed (drivers use lstat and replace, never write through, a link).
 * Uses synchronous realpath(3) on purpose: for metadata of cached inodes it is several times faster than
 * a thread-pool round trip, which is what keeps a no-op reconcile of 1,000 resources fast.
 */
export async function resolveUnderRoot(root: string, path: string): Promise<string> {
  const abs = joinUnderRoot(root, path);
  let realRoot = realRoots.get(root);
  if (realRoot === undefined) realRoots.set(root, (realRoot = realpathOfRoot(root)));
  const isRoot = path.split('/').every((seg) => seg === '' || seg === '.');
  const realParent = realpathOfExistingAncestor(isRoot ? abs : dirname(abs));
  if (realParent !== realRoot && !realParent.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) {
    realpathOfRoot(root); // the root itself vanished (e.g. unmounted): say so rather than "outside the root"
    throw new PathEscapesRootError(
      path,
      root,
      `escapes the root: its parent resolves to ${realParent}, outside the root`,
    );
  }
  return abs;
}

/**
 * Resolves a directory the kernel will follow to its end (a service's working directory) under `root`:
 * as `resolveUnderRoot`, and the path itself, a symlink as its last component included, must resolve
 * inside the root. Returns the joined (not the real) path; `assertResolvesInsideRoot` checks it again at use.
 */
export async function resolveDirUnderRoot(root: string, path: string): Promise<string> {
  const abs = await resolveUnderRoot(root, path);
  assertResolvesInsideRoot(root, abs, path);
  return abs;
}

/**
 * Checks, at the moment of use, that `abs` (a path already joined under `root`) resolves inside the root
 * with every symlink followed, its last component included; throws `PathEscapesRootError` otherwise.
 */
export function assertResolvesInsideRoot(root: string, abs: string, declared = abs): void {
  const realRoot = realpathOfRoot(root);
  const real = realpathOfExistingAncestor(abs);
  if (real !== realRoot && !real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep))
    throw new PathEscapesRootError(declared, root, `escapes the root: it resolves to ${real}, outside the root`);
}

/** The realpath of the agent's root; an error naming it (and --root) when it is gone. */
function realpathOfRoot(root: string): string {
  try {
    return realpathSync.native(root);
  } catch (e) {
    throw new Error(
      `the agent's root ${root} (its --root) ${isMissing(e) ? 'does not exist' : `cannot be resolved: ${String(e)}`}`,
    );
  }
}

function realpathOfExistingAncestor(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    try {
      return realpathSync.native(d);
    } catch (e) {
      const code = errnoCode(e);
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(d) === d) throw e;
    }
  }
}
