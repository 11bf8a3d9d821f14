/**
 * The one structured logger of every process: one JSON object a line (`{"time","level","msg",...}`),
 * messages in the past tense naming the object (`{"msg":"Applied Declaration","node":"a"}`).
 */

/** Fields attached to a log event (e.g. `{ plural: 'nodes', name: 'a' }`). */
export type LogFields = Record<string, unknown>;

/** What every component needs from a logger. */
export interface Logger {
  info(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** Options of a JSON-lines logger. */
export interface JsonLoggerOptions {
  /** Where lines go. Default: process.stderr. */
  write?: (line: string) => void;
  /** Fields added to every line (e.g. `{ component: 'store' }`). */
  fields?: LogFields;
}

/** A logger that writes one JSON object per line; Error values are written as their message. */
export function createJsonLogger(opts: JsonLoggerOptions = {}): Logger {
  const write =
    opts.write ??
    ((line: string) => {
      process.stderr.write(line);
    });
  const emit = (level: string, msg: string, fields?: LogFields): void => {
    const rec = { time: new Date().toISOString(), level, msg, ...opts.fields, ...fields };
    write(JSON.stringify(rec, (_k, v: unknown) => (v instanceof Error ? v.message : v)) + '\n');
  };
  return { info: (msg, fields) => emit('info', msg, fields), error: (msg, fields) => emit('error', msg, fields) };
}

/** A logger that drops everything (tests, many in-process agents in a benchmark). */
export const silentLogger: Logger = { info: () => {}, error: () => {} };
