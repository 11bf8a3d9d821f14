/**
 * The scale benchmark's memory probe: every second, the control plane's RSS split into anonymous and file-backed
 * pages (/proc/<pid>/smaps_rollup) and its V8 heap, external memory and ArrayBuffers (its own `GET /metrics`,
 * api/meta/process-metrics.ts), each sample filed under the benchmark phase it was taken in; the maximum of each
 * figure per phase says which phase makes the peak and whether it is the V8 heap or native memory.
 */
import { readFileSync } from 'node:fs';
import { request, type Agent } from 'node:https';
import type { ClientConfig } from '../../api/client/types.ts';
import { makeAgent } from './http.ts';
import { cpuSecondsOf } from './proc.ts';
import { sleep } from './load.ts';

/** The figures of one sample (or the maximum of each over a phase), in MiB; the heap's are missing when /metrics did not answer. */
export interface MemorySample {
  rss: number;
  anon: number;
  file: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** V8's old space, new space and large-object space (big strings and arrays), used. */
  old: number;
  new: number;
  large: number;
}

/** A phase's maxima, how many samples it had and the control plane's CPU seconds during it. */
export interface PhaseMemory {
  phase: string;
  samples: number;
  cpuSeconds: number;
  max: Partial<MemorySample>;
}

const FIELDS: Array<[keyof MemorySample, string]> = [
  ['heapTotal', 'nodejs_heap_size_total_bytes'],
  ['heapUsed', 'nodejs_heap_size_used_bytes'],
  ['external', 'nodejs_external_memory_bytes'],
  ['arrayBuffers', 'nodejs_array_buffers_bytes'],
  ['old', 'nodejs_heap_space_size_used_bytes{space="old"}'],
  ['new', 'nodejs_heap_space_size_used_bytes{space="new"}'],
  ['large', 'nodejs_heap_space_size_used_bytes{space="large_object"}'],
];

/** RSS, anonymous and file-backed resident memory of `pid` in MiB, from smaps_rollup. */
export function smapsOf(pid: number): Pick<MemorySample, 'rss' | 'anon' | 'file'> {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (f: string): number => Number(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  const rss = kib('Rss') / 1024;
  const anon = kib('Anonymous') / 1024;
  return { rss, anon, file: rss - anon };
}

async function scrape(config: ClientConfig, agent: Agent): Promise<Partial<MemorySample>> {
  const res = await fetchMetrics(config, agent);
  const out: Partial<MemorySample> = {};
  for (const [key, name] of FIELDS) {
    const at = res.indexOf(`\n${name} `);
    const m = at < 0 ? null : /^ (\S+)$/m.exec(res.slice(at + name.length + 1));
    if (m) out[key] = Number(m[1]) / 2 ** 20;
  }
  return out;
}

function fetchMetrics(config: ClientConfig, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(new URL('/metrics', config.server), {
      agent,
      timeout: 5000,
      headers: { authorization: `Bearer ${config.token}` },
    });
    req.on('timeout', () => req.destroy(new Error('metrics timed out')));
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.end();
  });
}

/** Samples the control plane every second under the phase last named; `stop()` ends it and gives the maxima. */
export class MemoryPhases {
  readonly #phases = new Map<string, PhaseMemory>();
  #phase = 'start';
  #stopped = false;
  #phaseStart = Date.now();
  #snapshotTaken = false;
  #lastCpu?: { pid: number; seconds: number };
  readonly #done: Promise<void>;

  /** `target()` is read at each sample: the process (its pid changes at a restart) and its admin config. */
  constructor(target: () => { pid: number; config: ClientConfig }) {
    this.#done = this.#loop(target);
  }

  /** Files the next samples under `name`. */
  phase(name: string): void {
    this.#phase = name;
    this.#phaseStart = Date.now();
    process.stderr.write(`bench: scale memory phase: ${name}\n`);
  }

  /** Stops sampling; the maxima per phase, in the order the phases began. */
  async stop(): Promise<PhaseMemory[]> {
    this.#stopped = true;
    await this.#done;
    return [...this.#phases.values()];
  }

  async #loop(target: () => { pid: number; config: ClientConfig }): Promise<void> {
    let agent: Agent | undefined;
    let server = '';
    while (!this.#stopped) {
      const t = target();
      if (t.config.server !== server || !agent) {
        agent?.destroy();
        agent = makeAgent(t.config) as Agent;
        server = t.config.server;
      }
      const phase = this.#phase;
      this.#maybeSnapshot(t.pid, phase);
      this.#cpu(t.pid, phase);
      try {
        const [heap, proc] = [await scrape(t.config, agent).catch(() => ({})), smapsOf(t.pid)];
        this.#record(phase, { ...proc, ...heap });
      } catch {
        // The process is gone (the herd's SIGKILL): no sample.
      }
      await sleep(1000);
    }
    agent?.destroy();
  }

  /**
   * `SCALE_HEAP_SNAPSHOT="PHASE@MS"`: once, MS ms into PHASE, sends SIGUSR2 to the control plane (started with
   * `SCALE_CP_NODE_ARGS="--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=DIR"`), which writes a heap snapshot.
   */
  #maybeSnapshot(pid: number, phase: string): void {
    const [name, ms] = (process.env.SCALE_HEAP_SNAPSHOT ?? '').split('@');
    if (this.#snapshotTaken || name !== phase || Date.now() - this.#phaseStart < Number(ms ?? 0)) return;
    this.#snapshotTaken = true;
    process.kill(pid, 'SIGUSR2');
  }

  /** Adds the CPU seconds since the last sample to `phase` (a restarted process starts from 0). */
  #cpu(pid: number, phase: string): void {
    let now: number;
    try {
      now = cpuSecondsOf(pid);
    } catch {
      return;
    }
    const p = this.#entry(phase);
    if (this.#lastCpu && this.#lastCpu.pid === pid) p.cpuSeconds += now - this.#lastCpu.seconds;
    this.#lastCpu = { pid, seconds: now };
  }

  #entry(phase: string): PhaseMemory {
    let p = this.#phases.get(phase);
    if (!p) this.#phases.set(phase, (p = { phase, samples: 0, cpuSeconds: 0, max: {} }));
    return p;
  }

  #record(phase: string, s: Partial<MemorySample>): void {
    const p = this.#entry(phase);
    p.samples++;
    for (const [k, v] of Object.entries(s) as Array<[keyof MemorySample, number]>)
      if (Number.isFinite(v)) p.max[k] = Math.max(p.max[k] ?? 0, v);
  }
}

/** One line per phase: `phase (samples): RSS x (anon y, file z), heap used/total, external, array buffers`. */
export function memoryLines(phases: PhaseMemory[]): string[] {
  const f = (x: number | undefined): string => (x === undefined ? 'n/a' : x.toFixed(0));
  return phases.map(
    ({ phase, samples, cpuSeconds, max: m }) =>
      `${phase} (${samples} s, CPU ${cpuSeconds.toFixed(1)} s): RSS ${f(m.rss)} MiB (anon ${f(m.anon)}, file ${f(m.file)}), ` +
      `heap used ${f(m.heapUsed)} / total ${f(m.heapTotal)} (old ${f(m.old)}, new ${f(m.new)}, large ${f(m.large)}), ` +
      `external ${f(m.external)}, array buffers ${f(m.arrayBuffers)}`,
  );
}
