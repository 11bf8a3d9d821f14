/**
 * The structured logger the API server writes to: one JSON event a line, past tense, naming the object.
 * Structurally the same as the controller runtime's logger, so one logger serves the whole process.
 */

/** Fields attached to a log event (e.g. `{ plural: 'nodes', name: 'a' }`). */
export type LogFields = Record<string, unknown>;

/** What the server needs from a logger. */
export interface Logger {
  info(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** A logger that writes `{"time","level","msg",...fields}` lines to `write` (default: stderr). */
export function jsonLogger(write: (line: string) => void = (l) => { process.stderr.write(l); }): Logger {
  const emit = (level: string, msg: string, fields?: LogFields): void => {
    write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + '\n');
  };
  return { info: (m, f) => emit('info', m, f), error: (m, f) => emit('error', m, f) };
}

/** A logger that drops everything (the default in tests). */
export const silentLogger: Logger = { info: () => {}, error: () => {} };
