/**
 * The control-plane process's stop on SIGTERM/SIGINT. The handlers are installed before anything starts, so a
 * signal during start-up is never left to the default action (death by the signal, exit code null): the stop
 * waits for the start to settle, closes what was opened (newest first), logs `Stopped` and exits 0. A second
 * signal exits 1 at once; a start that fails exits 1 on its own (main.ts).
 */
import type { Logger } from '../api/meta/logger.ts';

/** What `main.ts` tells the stop while it starts. */
export interface Shutdown {
  /** Registers something to close on stop; closed in the reverse order of registration. */
  onStop(close: () => void | Promise<void>): void;
  /** The start is complete: a stop asked for during it proceeds now. */
  started(): void;
}

/** Installs the SIGTERM and SIGINT handlers of the process (once, first thing in `run`). */
export function handleShutdownSignals(logger: Logger): Shutdown {
  const closers: Array<() => void | Promise<void>> = [];
  let started!: () => void;
  const start = new Promise<void>((resolve) => (started = resolve));
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) {
      logger.error('Exited without a clean shutdown', { signal });
      process.exit(1);
    }
    stopping = true;
    logger.info('Shutting down', { signal });
    try {
      await start;
      for (const close of closers.reverse()) await close();
      logger.info('Stopped');
      process.exit(0);
    } catch (e) {
      logger.error('Failed to shut down cleanly', { error: String(e) });
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return { onStop: (close) => void closers.push(close), started: () => started() };
}
