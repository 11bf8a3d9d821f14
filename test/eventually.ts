/**
 * Retries an assertion until it holds: the tests' one way to wait for a condition without a fixed sleep.
 * `fn` throws (a failed assert) until what it checks is true; its last error is thrown after `timeoutMs`.
 * Give `assert.ok` a message inside `fn`: without one, a failing `assert.ok` makes Node parse the transpiled
 * source to describe the expression, which blocks the event loop for seconds on every retry.
 */
export async function eventually<T>(
  fn: () => Promise<T>,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 5000);
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 10));
    }
  }
}
