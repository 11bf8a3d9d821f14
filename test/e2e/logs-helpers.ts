/**
 * Shared parts of the logs e2e tests (test/e2e/logs-*.test.ts): a module whose process Service prints a
 * numbered line every 100 ms, and readers of what the control plane stored for it.
 */
import assert from 'node:assert/strict';
import type { ClientConfig } from '../../api/client/types.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import { logsPath } from '../../api/wire/log-wire.ts';
import { httpRequest } from '../harness.ts';
import { moduleObject, RUN_TAG } from './mesh-helpers.ts';

/** The Service's id on the node, for an assignment `counter-on-<node>`. */
export const counterService = (node: string): string => `counter-on-${node}/counter`;

/** The module: one process Service printing `line N<pad>` every 100 ms (N from 1), tagged with RUN_TAG. */
export function counterModule(pad = 0): KubeObject {
  const script = `/* ${RUN_TAG}-counter */ let i = 0; setInterval(() => console.log('line ' + (++i) + ${JSON.stringify(pad ? ' ' + '.'.repeat(pad) : '')}), 100)`;
  return moduleObject('counter', '1.0.0', [
    {
      id: 'counter',
      kind: 'Service',
      spec: { driver: 'process', command: [process.execPath, '-e', script], restart: 'always' },
    },
  ]);
}

/** A stored line: when the node read it and the counter's number (undefined for other lines). */
export interface StoredLine {
  time: string;
  n?: number;
  text: string;
}

/** The service's log as the control plane stored it (with time stamps); [] when it has none yet. */
export async function storedLines(config: ClientConfig, node: string): Promise<StoredLine[]> {
  const q = new URLSearchParams({ service: counterService(node), timestamps: 'true' });
  const r = await httpRequest(config, 'GET', `${logsPath(node)}?${q}`);
  if (r.status === 404) return [];
  assert.equal(r.status, 200, r.text);
  return r.text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [time, ...rest] = l.split(' ');
      const text = rest.join(' ');
      const m = /^line (\d+)\b/.exec(text);
      return { time: time, text, ...(m ? { n: Number(m[1]) } : {}) };
    });
}

/** The counter numbers among the lines, in stored order. */
export const numbers = (lines: StoredLine[]): number[] => lines.flatMap((l) => (l.n === undefined ? [] : [l.n]));

/** 1..n. */
export const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
