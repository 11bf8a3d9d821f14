/**
 * The markdown section of the agent memory benchmark (bench/agent-rss.ts).
 */
import type { RssFigures } from '../agent-rss.ts';
import { mib } from './proc.ts';
import { ms, verdict } from './stats.ts';

const TARGET_MIB = 80;

/** What the section shows. */
export interface AgentRssReport {
  /** The shipped agent first (the verdict is on it), then the comparison. */
  figures: RssFigures[];
  bareNodeMiB: number;
  built: string;
  settings: { reconcile: string; heartbeat: string; steadyMs: number; sampleMs: number };
}

const steadyMax = (f: RssFigures): number => Math.max(...f.samples, f.end.rssMiB);

/** VmRSS at every quarter of the window, e.g. `63.1 → 80.2 → 95.0 → 94.8 → 94.6`. */
function curve(f: RssFigures): string {
  const q = [0.25, 0.5, 0.75, 1].map((x) => f.samples[Math.max(0, Math.round(x * f.samples.length) - 1)]);
  return [f.afterApply.rssMiB, ...q].map(mib).join(' → ');
}

function row(f: RssFigures): string {
  return (
    `| ${f.variant.label} | ${mib(f.afterApply.rssMiB)} | ${curve(f)} | **${mib(steadyMax(f))}** | ${mib(f.end.hwmMiB)} | ` +
    `${f.reconciles.count} (mean ${ms(f.reconciles.meanMs)} ms) |`
  );
}

/** Renders the section. */
export function renderAgentRss(r: AgentRssReport): string {
  const [shipped] = r.figures;
  const s = r.settings;
  const max = steadyMax(shipped);
  const applied = r.figures.map((f) => `${(f.appliedAfterMs / 1000).toFixed(1)} s`).join(' and ');
  return [
    `## 6. Agent memory: a \`mesh-agent\` process holding ${shipped.resources} resources`,
    '',
    `\`dist/mesh-agent.js run\` (the esbuild bundle, ${r.built}; no tsx; started as shipped, by its shebang), connected over HTTPS to the real control plane`,
    '(spawnControlPlane), which rendered its Declaration from one Module assigned to its node: 20 Directories, 180 Files of ~0.5 KiB and',
    `3 supervised Services (\`node -e\` processes, not counted in the agent's memory) — ${shipped.resources} resources. Once everything was applied`,
    `(${applied} after the spawn), VmRSS was read from /proc/<pid>/status every ${s.sampleMs} ms for ${s.steadyMs / 1000} s, with the agent reconciling`,
    `every ${s.reconcile} and heartbeating every ${s.heartbeat} (\`--reconcile-interval ${s.reconcile} --heartbeat-interval ${s.heartbeat}\`): V8 grows its heap with the`,
    'allocations made, not with time, so the window holds about as many reconciles as ~15 minutes at the default 5 s interval. A shorter look',
    'misleads: at 1 s reconciles the same agent sat at 63–68 MiB for the first 10 s and reached ~92 MiB only after ~2 minutes.',
    'A second agent (another node, the same Module) ran side by side without the V8 flag the shipped shebang gives, for comparison.',
    '',
    `| agent process | VmRSS after apply (MiB) | VmRSS over the window, at ¼ ½ ¾ 1 (MiB) | steady-state VmRSS: highest sample (MiB) | VmHWM (MiB) | reconciles in the window |`,
    '|---|---|---|---|---|---|',
    ...r.figures.map(row),
    `| for reference: an idle \`node -e\` (Node itself, nothing loaded) | ${mib(r.bareNodeMiB)} | | | | |`,
    '',
    'While writing this benchmark, the shipped agent was run once with `--trace-gc` for 3 minutes at 1 s reconciles: the live JS heap',
    "after each full (mark-compact) GC stayed at 6.4–6.7 MB, so nothing leaks; what grows is V8's young generation, which V8 enlarges",
    'step by step up to 2 × 16 MiB semi-spaces (heapTotal 16 → 45 MiB) as scavenges accumulate. `--max-semi-space-size=1` caps it,',
    'and `--optimize-for-size` makes V8 favour a smaller footprint over speed (both must be given on the command line, so the',
    "bundle's shebang carries them — hack/build.mjs — and the local mesh passes them; `v8.setFlagsFromString` at run time is too late).",
    '',
    'Target (issue 3), agent RSS:',
    '',
    `- mesh-agent steady-state VmRSS ≤ ${TARGET_MIB} MiB (MiB as top and ps count them; 80 MB in SI units would be 76.3 MiB): ${mib(max)} MiB, as shipped — ${verdict(max <= TARGET_MIB)}`,
  ].join('\n');
}
