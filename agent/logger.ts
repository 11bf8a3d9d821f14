/**
 * The agent's structured logger: one JSON object per line on stderr (`{"time","level","msg",...}`),
 * messages in the past tense naming the object (`{"msg":"Applied Declaration","node":"a","generation":3}`).
 * Same line shape as the control plane's; it would move to api/ if both should share one.
 */
import type { Logger, LogFields } from './engine/types.ts';

/** Creates a JSON-lines logger writing to `write` (default stderr), with `fields` on every line. */
export function createAgentLogger(opts: { write?: (line: string) => void; fields?: LogFields } = {}): Logger {
  const write = opts.write ?? ((line: string) => { process.stderr.write(line); });
  const emit = (level: string, msg: string, fields?: LogFields): void => {
    const rec = { time: new Date().toISOString(), level, msg, ...opts.fields, ...fields };
    write(JSON.stringify(rec, (_k, v: unknown) => (v instanceof Error ? v.message : v)) + '\n');
  };
  return { info: (msg, fields) => emit('info', msg, fields), error: (msg, fields) => emit('error', msg, fields) };
}

/** A logger that drops everything (many in-process agents in a benchmark). */
export const silentLogger: Logger = { info: () => {}, error: () => {} };
