/**
 * Follows the log file of every supervised service (`<stateDir>/logs/<safeName(id)>.log`, see
 * agent/drivers/log-file.ts) and returns the complete lines written since the last call. Its read
 * positions are kept in a small file and written only when the caller has stored the lines (`commit`),
 * so an agent restart goes on where the last stored line ended — nothing lost, nothing read twice.
 *
 * Rotation is copy-then-truncate (`<id>.log` copied to `<id>.log.1`, then truncated). A rotation is
 * noticed when the file is shorter than the position, or when the bytes just before the position are no
 * longer the ones read there; the rest of the old part is then read from `<id>.log.1` (when it still
 * holds the same bytes at the position) before the new file from its start. A service's restart only
 * appends to its file. Over-long lines are cut into pieces of `maxLineBytes`.
 */
import { readdir, readFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { writeFileAtomic } from '../../api/meta/atomic-file.ts';
import type { Logger } from '../engine/types.ts';
import type { LogEntry } from './log-entry.ts';
import { readChunk, splitLines, type FilePos } from './tail-read.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** Options of `openTailer`. */
export interface TailerOptions {
  /** The directory of the service logs (`<stateDir>/logs`). */
  logsDir: string;
  /** The file that keeps the read positions. */
  positionsPath: string;
  /** Longer lines are cut into pieces of this size. Default 16 KiB. */
  maxLineBytes?: number;
  /** Bytes read per file per poll at most. Default 1 MiB. */
  maxReadBytes?: number;
  logger?: Logger;
}

/** New lines and how to make their positions durable. */
export interface Polled {
  entries: LogEntry[];
  /** Persists the positions after these lines (call once they are stored). */
  commit(): Promise<void>;
}

/** The tailer of all service logs. */
export interface Tailer {
  poll(): Promise<Polled>;
}

type Positions = Record<string, FilePos>;

/** The service id a log file name stands for (the inverse of `safeName`), or undefined. */
export function serviceOfLogFile(name: string): string | undefined {
  const m = /^([A-Za-z0-9_%-]+)\.log$/.exec(name);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return undefined;
  }
}

/** Opens the tailer, reading the positions a previous agent kept. */
export async function openTailer(opts: TailerOptions): Promise<Tailer> {
  let positions: Positions = {};
  try {
    positions = JSON.parse(await readFile(opts.positionsPath, 'utf8')) as Positions;
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT')
      opts.logger?.error('Reset unreadable log positions', { path: opts.positionsPath, error: (e as Error).message });
  }
  await mkdir(dirname(opts.positionsPath), { recursive: true, mode: 0o700 });
  const cfg = { maxLine: opts.maxLineBytes ?? 16 * 1024, maxRead: opts.maxReadBytes ?? 1024 * 1024 };

  async function files(): Promise<Array<{ service: string; path: string }>> {
    try {
      const names = await readdir(opts.logsDir);
      return names.flatMap((n) => {
        const service = serviceOfLogFile(n);
        return service === undefined ? [] : [{ service, path: join(opts.logsDir, n) }];
      });
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return [];
      throw e;
    }
  }

  return {
    async poll() {
      const next: Positions = {};
      const entries: LogEntry[] = [];
      const time = new Date().toISOString();
      for (const { service, path } of await files()) {
        const r = await readChunk({
          path,
          pos: positions[service],
          ...cfg,
          onLost: (why) => opts.logger?.error('Lost part of a rotated service log', { service, why }),
        });
        next[service] = r.pos;
        for (const line of splitLines(r.data, cfg.maxLine)) entries.push({ service, time, line });
      }
      const changed = !isDeepStrictEqual(next, positions);
      return {
        entries,
        commit: async () => {
          if (changed) await writeFileAtomic(opts.positionsPath, JSON.stringify(next) + '\n', { mode: 0o600 });
          positions = next;
        },
      };
    },
  };
}
