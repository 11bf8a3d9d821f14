/**
 * Small file-system helpers the drivers share: mode parsing and errno codes. The atomic file replace is
 * api/meta/atomic-file.ts.
 */
import { posix } from 'node:path';
import type { FileMode } from '../engine/types.ts';

/** The errno code of a Node.js file-system error (`ENOENT`, …), or undefined. */
export function errnoCode(e: unknown): string | undefined {
  return e instanceof Error ? (e as NodeJS.ErrnoException).code : undefined;
}

/** Parses a declared mode (`0o644`, `"0644"`, `"644"`, `"0o644"`) into permission bits; throws when invalid. */
export function parseMode(mode: FileMode): number {
  const n = typeof mode === 'number' ? mode : /^(0o|0)?[0-7]{1,4}$/.test(mode) ? parseInt(mode.replace(/^0o/, ''), 8) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 0o7777) throw new Error(`invalid mode ${JSON.stringify(mode)}: expected octal like "0644"`);
  return n;
}

/** Formats permission bits as a 4-digit octal string (`0644`) for messages. */
export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

/** The world identity of a path-based resource (`path:/etc/x`), normalised so `/a//b/` equals `/a/b`. */
export function pathKey(path: string): string {
  return `path:${posix.normalize(path).replace(/\/+$/, '') || '/'}`;
}
