/**
 * Serial work: a function that runs the tasks handed to it one at a time, in the order they came, each
 * after the previous one settled. A task that fails rejects only its own promise; the next still runs.
 */

/** Runs `fn` after every task handed over before it has settled; resolves or rejects as `fn` does. */
export type Serial = <T>(fn: () => Promise<T>) => Promise<T>;

/** Creates one serial lane (e.g. one per engine, one per buffer). */
export function createSerial(): Serial {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn);
    tail = run.catch(() => {});
    return run;
  };
}
