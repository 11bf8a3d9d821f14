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
  /** Where lines go (`urgent` for an error line). Default: stderr, through stderrLine. */
  write?: (line: string, urgent: boolean) => void;
  /** Fields added to every line (e.g. `{ component: 'store' }`). */
  fields?: LogFields;
}

/** A logger that writes one JSON object per line; Error values are written as their message. */
export function createJsonLogger(opts: JsonLoggerOptions = {}): Logger {
  const write = opts.write ?? stderrLine;
  const emit = (level: string, msg: string, fields?: LogFields): void => {
    const rec = { time: new Date().toISOString(), level, msg, ...opts.fields, ...fields };
    // A replacer puts JSON.stringify on its slow path; only a line with an object in it can hold an Error.
    const flat = Object.values(rec).every((v) => typeof v !== 'object' || v === null);
    write((flat ? JSON.stringify(rec) : JSON.stringify(rec, errorsAsMessages)) + '\n', level === 'error');
  };
  return { info: (msg, fields) => emit('info', msg, fields), error: (msg, fields) => emit('error', msg, fields) };
}

/** Lines for stderr not written yet (stderrLine). */
let pending: string[] = [];
let flushing: NodeJS.Immediate | undefined;
let exitHooked = false;

function flushStderr(): void {
  flushing = undefined;
  if (pending.length === 0) return;
  const text = pending.join('');
  pending = [];
  process.stderr.write(text);
}

/**
 * Writes a log line to stderr. The lines of one turn of the event loop go out together, in one write at its end
 * (a controller that writes 5,000 Declarations in a change logs 5,000 lines: one system call, and one wake-up of
 * whatever reads them, per turn rather than per line); an error line goes out at once, after the lines before it.
 * Lines still pending when the process exits are written then (stderr is synchronous for files and pipes).
 */
export function stderrLine(line: string, urgent = false): void {
  pending.push(line);
  if (urgent) return flushStderr();
  if (flushing) return;
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', flushStderr);
  }
  flushing = setImmediate(flushStderr).unref();
}

/** JSON.stringify's replacer for log lines: an Error is written as its message. */
const errorsAsMessages = (_k: string, v: unknown): unknown => (v instanceof Error ? v.message : v);

/** A logger that drops everything (tests, many in-process agents in a benchmark). */
export const silentLogger: Logger = { info: () => {}, error: () => {} };
