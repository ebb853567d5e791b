/**
 * Polling with a deadline, for things that happen "soon" (file watchers, servers, workers).
 * Prefer this to fixed sleeps: it is as fast as the event allows and fails with a clear message.
 */
export interface WaitOptions {
  /** Give up after this long (default 5 s). */
  readonly timeoutMs?: number;
  /** Check this often (default 10 ms). */
  readonly intervalMs?: number;
  /** Said in the error when the deadline passes. */
  readonly message?: string;
}

/** Resolves with the first truthy value `check` returns; rejects when the deadline passes. */
export async function waitFor<T>(check: () => T | Promise<T>, options: WaitOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const intervalMs = options.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
      throw new Error(`${options.message ?? "condition not met"} within ${timeoutMs} ms${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
