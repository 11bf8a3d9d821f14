/**
 * The `File` driver: utf8 content and mode, replaced atomically. Observation is cheap when nothing
 * changed: the lstat facts recorded after the last apply (inode, size, mtime, ctime) vouch for the
 * content hash, a size mismatch proves a difference, and only otherwise is the file read.
 */
import { chmod, readFile, unlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import type { FileSpec } from '../../api/v1alpha1/generated/host-resource.ts';
import { WaitingError, type Change, type Driver, type Observed, type RemoveOutcome } from '../engine/types.ts';
import { fsyncDir, writeFileAtomic } from '../../api/meta/atomic-file.ts';
import { formatMode, parseMode, pathKey } from './fs-util.ts';
import { lstatPath } from './directory.ts';
import { resolveUnderRoot } from './resolve-under-root.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** The mode a file gets when its spec names none. */
export const DEFAULT_FILE_MODE = 0o644;

/** What the file driver sees: lstat facts and, when known, the sha256 of the content. */
export interface FileObserved extends Observed {
  type?: 'directory' | 'file' | 'symlink' | 'other';
  mode?: number;
  size?: number;
  ino?: number;
  mtimeMs?: number;
  ctimeMs?: number;
  /** Absent when the content was not read because its size already differs. */
  sha256?: string;
}

const hashes = new WeakMap<FileSpec, { content: string; sha256: string }>();

function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * The declared content; `contentFrom` must have been resolved into `content` by the agent beforehand. When it was
 * not (the agent does not hold that certificate's material yet), the File waits for it (WaitingError).
 */
function desiredContent(spec: FileSpec): string {
  if (typeof spec?.path !== 'string') throw new Error('File spec.path must be a string');
  if (spec.content === undefined && spec.contentFrom !== undefined) {
    const { certificate, key } = spec.contentFrom;
    throw new WaitingError(
      `File ${spec.path} waits for the ${key} of certificate "${certificate}", which this node does not hold yet`,
    );
  }
  return spec.content ?? '';
}

function desiredHash(spec: FileSpec): string {
  const content = desiredContent(spec);
  const cached = hashes.get(spec);
  if (cached?.content === content) return cached.sha256;
  const h = sha256(content);
  hashes.set(spec, { content, sha256: h });
  return h;
}

function sameFacts(a: FileObserved, b: FileObserved): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

/** The `File` driver. */
export const fileDriver: Driver<FileSpec, FileObserved> = {
  kind: 'File',
  key: (spec) => pathKey(spec.path),

  async observe(spec, ctx, last) {
    const content = desiredContent(spec);
    const abs = await resolveUnderRoot(ctx.root, spec.path);
    const seen: FileObserved = lstatPath(abs);
    if (!seen.exists || seen.type !== 'file') return seen;
    if (last?.sha256 && sameFacts(seen, last)) return { ...seen, sha256: last.sha256 };
    if (seen.size !== Buffer.byteLength(content)) return seen;
    return { ...seen, sha256: sha256(await readFile(abs)) };
  },

  diff(spec, observed) {
    if (!observed.exists) return [{ field: 'path', message: `file ${spec.path} is absent` }];
    if (observed.type !== 'file') return [{ field: 'path', message: `${spec.path} is a ${observed.type}, not a file` }];
    const changes: Change[] = [];
    if (observed.sha256 !== desiredHash(spec))
      changes.push({ field: 'content', message: `content of ${spec.path} differs` });
    if (spec.mode !== undefined && observed.mode !== parseMode(spec.mode)) {
      changes.push({
        field: 'mode',
        message: `mode ${formatMode(observed.mode ?? 0)} → ${formatMode(parseMode(spec.mode))}`,
      });
    }
    return changes;
  },

  async apply(spec, ctx, observed) {
    const content = desiredContent(spec);
    const abs = await resolveUnderRoot(ctx.root, spec.path);
    const mode = spec.mode === undefined ? DEFAULT_FILE_MODE : parseMode(spec.mode);
    if (observed.type === 'directory') throw new Error(`${spec.path} is a directory, not a file`);
    if (observed.type === 'file' && observed.sha256 === desiredHash(spec)) {
      if (spec.mode !== undefined) await chmod(abs, mode);
      return;
    }
    try {
      await writeFileAtomic(abs, content, { mode });
    } catch (e) {
      if (errnoCode(e) === 'ENOENT')
        throw new Error(
          `parent directory ${dirname(spec.path)} of ${spec.path} does not exist (declare a Directory before this File)`,
        );
      throw e;
    }
  },

  async remove(spec, ctx): Promise<RemoveOutcome | void> {
    const abs = await resolveUnderRoot(ctx.root, spec.path);
    const seen = lstatPath(abs);
    if (!seen.exists) return;
    if (seen.type === 'directory') return { retained: true, message: `${spec.path} is now a directory: left in place` };
    await unlink(abs);
    await fsyncDir(dirname(abs));
  },
};
