/**
 * The probes' count of store writes: the control plane's journal files (`<data dir>/store/journal-*`), their sizes
 * at one moment and the lines (one per write) appended since.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Journal file name → its size in bytes now. */
export function journalSizes(dataDir: string): Map<string, number> {
  const dir = join(dataDir, 'store');
  return new Map(
    readdirSync(dir)
      .filter((f) => f.startsWith('journal-'))
      .map((f) => [f, statSync(join(dir, f)).size]),
  );
}

/** The journal lines written since `before` (sizes from journalSizes). */
export function journalLinesSince(dataDir: string, before: Map<string, number>): string[] {
  const out: string[] = [];
  for (const [f, size] of journalSizes(dataDir)) {
    const text = readFileSync(join(dataDir, 'store', f))
      .subarray(before.get(f) ?? 0, size)
      .toString();
    out.push(...text.split('\n').filter(Boolean));
  }
  return out;
}

/** A journal line's resource (`nodes`, `declarations`, …). */
export function resourceOf(line: string): string {
  return (JSON.parse(line) as { plural?: string }).plural ?? '?';
}

/** The journal lines written since `before` (sizes from journalSizes), counted by resource. */
export function writesSince(dataDir: string, before: Map<string, number>): Map<string, number> {
  const by = new Map<string, number>();
  for (const line of journalLinesSince(dataDir, before)) by.set(resourceOf(line), (by.get(resourceOf(line)) ?? 0) + 1);
  return by;
}
