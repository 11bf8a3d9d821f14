/**
 * Helpers for the engine's and drivers' tests (not used by production code): temporary roots, a
 * recording logger, and an in-memory inventory store that records what was persisted.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InventoryChange } from './inventory.ts';
import type { DriverContext, InventoryEntry, Logger, LogFields } from './types.ts';

/** A logger that keeps every line (`lines`) instead of printing. */
export function memoryLogger(): Logger & { lines: Array<{ level: string; msg: string; fields?: LogFields }> } {
  const lines: Array<{ level: string; msg: string; fields?: LogFields }> = [];
  return {
    lines,
    info: (msg, fields) => {
      lines.push({ level: 'info', msg, fields });
    },
    error: (msg, fields) => {
      lines.push({ level: 'error', msg, fields });
    },
  };
}

/** A fresh temporary directory with `root/` and `state/` inside, and a `cleanup()` that deletes it. */
export function tempHost(prefix = 'meshctl-agent-'): {
  dir: string;
  root: string;
  stateDir: string;
  ctx: DriverContext;
  cleanup(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const root = join(dir, 'root');
  const stateDir = join(dir, 'state');
  mkdirSync(root);
  mkdirSync(stateDir);
  return {
    dir,
    root,
    stateDir,
    ctx: { root, stateDir, logger: memoryLogger() },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** An inventory store in memory: keeps the last saved list, hands out JSON copies (as a real store would). */
export function memoryInventoryStore(initial: InventoryEntry[] = []): {
  load(): Promise<InventoryEntry[]>;
  save(entries: readonly InventoryEntry[], change: InventoryChange): Promise<void>;
  saved: () => InventoryEntry[];
  changes: InventoryChange[];
} {
  let last: readonly InventoryEntry[] = initial;
  const copy = (): InventoryEntry[] => JSON.parse(JSON.stringify(last)) as InventoryEntry[];
  const changes: InventoryChange[] = [];
  return {
    load: async () => copy(),
    save: async (entries, change) => {
      last = entries;
      changes.push(change);
    },
    saved: copy,
    changes,
  };
}
