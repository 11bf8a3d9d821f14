/**
 * The `Directory` driver: `mkdir -p` with a mode; removal is `rmdir` of an empty directory only, so
 * content the agent does not own is never deleted (a non-empty directory is retained and reported).
 */
import { lstatSync } from 'node:fs';
import { chmod, mkdir, rmdir } from 'node:fs/promises';
import type { DirectorySpec } from '../../api/v1alpha1/generated/host-resource.ts';
import type { Change, Driver, Observed, RemoveOutcome, ResourceContext } from '../engine/types.ts';
import { formatMode, parseMode, pathKey } from './fs-util.ts';
import { resolveUnderRoot } from './resolve-under-root.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** The mode a directory gets when its spec names none. */
export const DEFAULT_DIRECTORY_MODE = 0o755;

/** What the directory driver sees: whether the path exists, what it is, and its permission bits. */
export interface DirectoryObserved extends Observed {
  type?: 'directory' | 'file' | 'symlink' | 'other';
  mode?: number;
}

/**
 * Observes a path with lstat (shared with the file driver). Synchronous on purpose: a stat of a cached
 * inode costs microseconds, less than the thread-pool round trip of the async call.
 */
export function lstatPath(
  abs: string,
): DirectoryObserved & { size?: number; ino?: number; mtimeMs?: number; ctimeMs?: number } {
  const st = lstatSync(abs, { throwIfNoEntry: false });
  if (!st) return { exists: false };
  const type = st.isDirectory() ? 'directory' : st.isFile() ? 'file' : st.isSymbolicLink() ? 'symlink' : 'other';
  return {
    exists: true,
    type,
    mode: st.mode & 0o7777,
    size: st.size,
    ino: st.ino,
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
  };
}

function checkSpec(spec: DirectorySpec): void {
  if (typeof spec?.path !== 'string') throw new Error('Directory spec.path must be a string');
}

/** The `Directory` driver. */
export const directoryDriver: Driver<DirectorySpec, DirectoryObserved> = {
  kind: 'Directory',
  key: (spec) => pathKey(spec.path),

  async observe(spec, ctx) {
    checkSpec(spec);
    const o = lstatPath(await resolveUnderRoot(ctx.root, spec.path));
    return o.exists ? { exists: true, type: o.type, mode: o.mode } : { exists: false };
  },

  diff(spec, observed) {
    const changes: Change[] = [];
    if (!observed.exists) return [{ field: 'path', message: `directory ${spec.path} is absent` }];
    if (observed.type !== 'directory')
      return [{ field: 'path', message: `${spec.path} is a ${observed.type}, not a directory` }];
    if (spec.mode !== undefined && observed.mode !== parseMode(spec.mode)) {
      changes.push({
        field: 'mode',
        message: `mode ${formatMode(observed.mode ?? 0)} → ${formatMode(parseMode(spec.mode))}`,
      });
    }
    return changes;
  },

  async apply(spec, ctx, observed) {
    checkSpec(spec);
    const abs = await resolveUnderRoot(ctx.root, spec.path);
    if (observed.exists && observed.type !== 'directory')
      throw new Error(`${spec.path} exists and is a ${observed.type}, not a directory`);
    const mode = spec.mode === undefined ? DEFAULT_DIRECTORY_MODE : parseMode(spec.mode);
    await mkdir(abs, { recursive: true, mode });
    if (!observed.exists || spec.mode !== undefined) await chmod(abs, mode);
  },

  async remove(spec, ctx: ResourceContext): Promise<RemoveOutcome | void> {
    const abs = await resolveUnderRoot(ctx.root, spec.path);
    try {
      await rmdir(abs);
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ENOENT') return;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') {
        return {
          retained: true,
          message: `directory ${spec.path} is not empty: left in place (it holds entries this resource does not own)`,
        };
      }
      if (code === 'ENOTDIR')
        return { retained: true, message: `${spec.path} is no longer a directory: left in place` };
      throw e;
    }
  },
};
