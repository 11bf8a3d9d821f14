/**
 * Small file-system helpers the drivers share: mode parsing and errno codes. The atomic file replace is
 * api/meta/atomic-file.ts.
 */
import { posix } from 'node:path';

/**
 * Parses a declared mode into permission bits. It accepts exactly what the schema's `FileMode` allows,
 * an octal string of three digits with an optional leading 0 (`"0644"`, `"644"`); throws otherwise.
 */
export function parseMode(mode: string): number {
  if (typeof mode !== 'string' || !/^0?[0-7]{3}$/.test(mode)) {
    throw new Error(`invalid mode ${JSON.stringify(mode)}: expected an octal string such as "0644"`);
  }
  return parseInt(mode, 8);
}

/** Formats permission bits as a 4-digit octal string (`0644`) for messages. */
export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

/** The world identity of a path-based resource (`path:/etc/x`), normalised so `/a//b/` equals `/a/b`. */
export function pathKey(path: string): string {
  return `path:${posix.normalize(path).replace(/\/+$/, '') || '/'}`;
}
