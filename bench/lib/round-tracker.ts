/**
 * Follows one Module change through the mesh for the 50-agent benchmark, from two admin watches (Declarations
 * and Assignments): per node, when the controller re-rendered its Declaration with the new round, when its
 * agent reported that generation applied (status.appliedGeneration = spec.generation), and when the
 * controller marked its Assignment Applied at the new version. Resolves once every node has all three.
 */
import { performance } from 'node:perf_hooks';
import type { Client, WatchStream } from '../../api/client/types.ts';
import type { KubeObject, WatchEvent } from '../../api/meta/types.ts';
import type { Assignment, Declaration } from '../../api/v1alpha1/generated/index.ts';
import type { RoundMark } from './sim-agent.ts';

/** The module version of round `r` (the benchmark's Module is at this version during round r). */
export function versionOf(round: number): string {
  return `1.0.${round}`;
}

/** The File content of round `r`; the round is read back from rendered Declarations. */
export function contentOf(round: number): string {
  return `round=${round}\n${'# padding to make the file a realistic ~0.5 KiB configuration\n'.repeat(8)}`;
}

/** The round a Declaration renders (from its File's content), or -1. */
export function roundOf(decl: Declaration): number {
  for (const r of decl.spec?.resources ?? []) {
    const m = r.kind === 'File' ? /^round=(\d+)\n/.exec(r.spec.content ?? '') : null;
    if (m) return Number(m[1]);
  }
  return -1;
}

/** Per node, the performance.now() at which each milestone of the current round was seen. */
export interface RoundMarks {
  written: Map<string, number>;
  applied: Map<string, number>;
  assigned: Map<string, number>;
}

/** See the module comment. */
export class RoundTracker {
  #round = -1;
  #marks: RoundMarks = { written: new Map(), applied: new Map(), assigned: new Map() };
  #done?: () => void;
  #streams: WatchStream[] = [];
  #nodes: number;
  #declarations = true;

  constructor(nodes: number) {
    this.#nodes = nodes;
  }

  /**
   * Opens the watches from `resourceVersion` (a list's, taken before anything was created): the Assignments', and
   * unless `declarations` is false the Declarations' (whose `written` and `applied` marks the caller then takes from
   * elsewhere: the scale bench asks its simulated agents, sim-agent.ts RoundMark).
   */
  async open(client: Client, resourceVersion: string, { declarations = true } = {}): Promise<void> {
    this.#declarations = declarations;
    if (declarations) {
      const stream = await client.watch('declarations', { resourceVersion });
      this.#streams.push(stream);
      void this.#pump(stream, (d, now) => this.#onDeclaration(d, d.metadata.name ?? '', now));
    }
    const assignments = await client.watch('assignments', { resourceVersion });
    this.#streams.push(assignments);
    void this.#pump(assignments, (a, now) => this.#onAssignment(a, now));
  }

  async #pump<T extends KubeObject>(s: WatchStream<T>, onObject: (obj: T, now: number) => void): Promise<void> {
    for await (const ev of s.events) this.#onEvent(ev, onObject);
  }

  #onEvent<T extends KubeObject>(ev: WatchEvent<T>, onObject: (obj: T, now: number) => void): void {
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') return;
    onObject(ev.object, performance.now());
    const m = this.#marks;
    const declared = !this.#declarations || (m.applied.size === this.#nodes && m.written.size === this.#nodes);
    if (declared && m.assigned.size === this.#nodes) this.#done?.();
  }

  #onDeclaration(d: Declaration, node: string, now: number): void {
    if (roundOf(d) !== this.#round) return;
    if (!this.#marks.written.has(node)) this.#marks.written.set(node, now);
    const applied = d.status?.appliedGeneration;
    if (applied !== undefined && applied === d.spec.generation && !this.#marks.applied.has(node))
      this.#marks.applied.set(node, now);
  }

  #onAssignment(a: Assignment, now: number): void {
    const cond = a.status?.conditions?.find((c) => c.type === 'Applied');
    if (a.status?.version !== versionOf(this.#round) || cond?.status !== 'True') return;
    if (!this.#marks.assigned.has(a.spec.node)) this.#marks.assigned.set(a.spec.node, now);
  }

  /** Starts a round; resolves with its marks once every node reached every milestone watched, rejects after `timeoutMs`. */
  expect(round: number, timeoutMs: number): Promise<RoundMarks> {
    this.#round = round;
    const marks: RoundMarks = { written: new Map(), applied: new Map(), assigned: new Map() };
    this.#marks = marks;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#done = undefined;
        reject(
          new Error(
            `round ${round}: after ${timeoutMs} ms, ${marks.written.size} Declarations re-rendered, ` +
              `${marks.applied.size} applied, ${marks.assigned.size} Assignments Applied (of ${this.#nodes})`,
          ),
        );
      }, timeoutMs);
      this.#done = () => {
        clearTimeout(timer);
        this.#done = undefined;
        resolve(marks);
      };
    });
  }

  close(): void {
    for (const s of this.#streams) s.close();
  }
}

/** The stored object's resourceVersion (for the next update). */
export function rvOf(obj: KubeObject): string {
  return obj.metadata.resourceVersion ?? '';
}

/**
 * From the simulated agents' marks (sim-agent.ts RoundMark, by node): per node, ms from `fromEpochMs` until it was
 * sent round `round`'s Declaration (`written`) and until the control plane acknowledged its report of it applied
 * (`applied`). A node without such a mark is left out (the caller compares the counts with N).
 */
export function agentRoundTimes(
  marks: Map<string, RoundMark>,
  round: number,
  fromEpochMs: number,
): { written: number[]; applied: number[] } {
  const written: number[] = [];
  const applied: number[] = [];
  for (const m of marks.values()) {
    if (m.round !== round) continue;
    written.push(m.received - fromEpochMs);
    if (m.reported !== undefined) applied.push(m.reported - fromEpochMs);
  }
  return { written, applied };
}
