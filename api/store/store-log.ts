/**
 * The store's log lines and how they reach a process's logger. The store logs through a plain function so
 * that it needs no logger of its own (and tests can collect lines); `storeLogTo` gives it the process's.
 */
import type { LogFields, Logger } from '../meta/logger.ts';

/** One store log line: `msg` in the past tense, `level: 'error'` on a failure, and fields. */
export interface StoreLogLine {
  msg: string;
  level?: 'error';
  [field: string]: unknown;
}

/** Where the store's log lines go. */
export type StoreLogger = (line: StoreLogLine) => void;

/** A StoreLogger writing to `logger` (failures at error level), with `fields` (e.g. `{ component: 'store' }`) added. */
export function storeLogTo(logger: Logger, fields: LogFields = {}): StoreLogger {
  return ({ msg, level, ...rest }) =>
    level === 'error' ? logger.error(msg, { ...rest, ...fields }) : logger.info(msg, { ...rest, ...fields });
}
