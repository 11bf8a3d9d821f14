/** Reading the control plane's `--trace-gc` lines (SCALE_CP_NODE_ARGS=--trace-gc) in the probes. */

/** GC pauses (ms) and counts by kind in `text`, the control plane's `--trace-gc` lines. */
export function gcOf(text: string): string {
  const kinds = new Map<string, { n: number; ms: number }>();
  for (const m of text.matchAll(
    /ms: (Scavenge|Mark-Compact|Mark-sweep|Minor Mark-Compact)[^,]*, ([\d.]+) \/ ([\d.]+) ms/g,
  )) {
    const k = kinds.get(m[1]) ?? { n: 0, ms: 0 };
    k.n++;
    k.ms += Number(m[2]);
    kinds.set(m[1], k);
  }
  return [...kinds].map(([k, v]) => `${k} ${v.n}× ${v.ms.toFixed(0)} ms`).join(', ') || 'no --trace-gc lines';
}
