/**
 * A process of simulated agents for the scale benchmark (bench/scale.ts forks a few, so the agents do not
 * share the control plane's event loop nor one event loop among all of them). argv[2] is a JSON file:
 * `{ config, heartbeatIntervalMs, logEveryMs, startSpreadMs, nodes: [{ node, token }] }`. Each agent starts
 * after a random delay below `startSpreadMs`. Every second the process sends its parent
 * `{ reachable, started, total, neverAnswered, lost }`; on the message `'marks'` it sends `{ marks }` (ScaleWorkerMarks);
 * on `'stop'` it stops its agents and exits.
 */
import { readFileSync } from 'node:fs';
import type { ClientConfig } from '../../api/client/types.ts';
import { startSimAgent, type RoundMark, type SimAgent } from './sim-agent.ts';

/** The file argv[2] names. */
export interface ScaleWorkerInput {
  config: ClientConfig;
  heartbeatIntervalMs: number;
  logEveryMs: number;
  startSpreadMs: number;
  nodes: { node: string; token: string }[];
}

/** What the worker reports every second. */
export interface ScaleWorkerReport {
  reachable: number;
  started: number;
  total: number;
  /** Started agents that had no answer at all yet (reachable() undefined). */
  neverAnswered: number;
  /** Started agents that lost contact (reachable() false). */
  lost: number;
}

/** The answer to `'marks'`: each started agent's node and its newest round's mark. */
export interface ScaleWorkerMarks {
  marks: Array<[node: string, mark: RoundMark | undefined]>;
}

const input = JSON.parse(readFileSync(process.argv[2], 'utf8')) as ScaleWorkerInput;
const agents: SimAgent[] = [];
const timers = input.nodes.map(({ node, token }) =>
  setTimeout(() => {
    agents.push(
      startSimAgent({
        node,
        config: { ...input.config, token },
        heartbeatIntervalMs: input.heartbeatIntervalMs,
        logEveryMs: input.logEveryMs,
      }),
    );
  }, Math.random() * input.startSpreadMs),
);
const report = setInterval(() => {
  const out: ScaleWorkerReport = {
    reachable: agents.filter((a) => a.reachable() === true).length,
    started: agents.length,
    total: input.nodes.length,
    neverAnswered: agents.filter((a) => a.reachable() === undefined).length,
    lost: agents.filter((a) => a.reachable() === false).length,
  };
  if (process.connected) process.send?.(out);
}, 1000);
process.on('message', (m) => {
  if (m === 'marks') {
    const out: ScaleWorkerMarks = { marks: agents.map((a) => [a.node, a.mark()]) };
    process.send?.(out);
    return;
  }
  if (m !== 'stop') return;
  for (const t of timers) clearTimeout(t);
  clearInterval(report);
  void Promise.all(agents.map((a) => a.stop())).finally(() => process.exit(0));
});
