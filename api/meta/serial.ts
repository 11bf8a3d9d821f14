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

/** Runs `fn` after every earlier task of the same `key` has settled; tasks of other keys do not wait for it. */
export type KeyedSerial = <T>(key: string, fn: () => Promise<T>) => Promise<T>;

/** Creates serial lanes by key (e.g. one per node); a lane is forgotten once its last task has settled. */
export function createKeyedSerial(): KeyedSerial {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(fn);
    const tail = run.catch(() => {});
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}
