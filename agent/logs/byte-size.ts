/**
 * Parses a size flag such as `--log-buffer-size 16Mi`: a whole number of bytes, optionally with a
 * binary suffix `Ki`, `Mi`, `Gi` (as Kubernetes quantities write them; `KiB`, `MiB`, `GiB` too).
 */

const UNITS: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** The bytes `text` stands for; throws an Error naming the flag when it is not a size of at least `min` bytes. */
export function parseByteSize(flag: string, text: string, min = 1024): number {
  const m = /^(\d+)(?:(Ki|Mi|Gi)B?)?$/.exec(text.trim());
  const n = m ? Number(m[1]) * UNITS[m[2] ?? ''] : NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new Error(`--${flag} must be a size of at least ${min} bytes such as 2Ki, 512Ki or 16Mi, not "${text}"`);
  }
  return n;
}
