/**
 * The structured logger the controller runtime writes to: one event a line, past tense, naming the object.
 */

/** Fields attached to a log event (e.g. `{ controller: 'node', key: 'a' }`). */
export type LogFields = Record<string, unknown>;

/** What the runtime needs from a logger. */
export interface Logger {
  info(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** Options of a JSON-lines logger. */
export interface JsonLoggerOptions {
  /** Where lines go. Default: process.stderr. */
  write?: (line: string) => void;
  /** Fields added to every line (e.g. `{ component: 'controller-manager' }`). */
  fields?: LogFields;
}

/** A logger that writes one JSON object per line: `{"time":…,"level":…,"msg":…,…fields}`. */
export function createJsonLogger(opts: JsonLoggerOptions = {}): Logger {
  const write = opts.write ?? ((line: string) => { process.stderr.write(line); });
  const emit = (level: string, msg: string, fields?: LogFields): void => {
    const rec = { time: new Date().toISOString(), level, msg, ...opts.fields, ...fields };
    write(JSON.stringify(rec, (_k, v: unknown) => (v instanceof Error ? v.message : v)) + '\n');
  };
  return { info: (msg, fields) => emit('info', msg, fields), error: (msg, fields) => emit('error', msg, fields) };
}

/** A logger that drops everything. */
export const silentLogger: Logger = { info: () => {}, error: () => {} };
