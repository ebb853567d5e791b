/**
 * Retry policy for model calls. We run our own loop instead of the SDK's (`maxRetries: 0` there)
 * because openai-node's retry sleep ignores the abort signal and honours any `retry-after`
 * without a cap: a cancelled compaction would wait out the whole backoff, and a server asking for
 * an hour would hold the session for an hour. Here every wait is abortable and bounded by the
 * call's deadline.
 */
import { CancelledError } from "../errors.js";

export interface BackoffOptions {
  /** First backoff delay; doubles per attempt. */
  readonly baseDelayMs: number;
  /** Cap for one backoff delay (not for a server's explicit retry-after). */
  readonly maxDelayMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseDelayMs: 500, maxDelayMs: 8_000 };

/** Status codes worth another attempt: request timeout, lock conflict, rate limit, server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait the server asked for, in ms: `retry-after-ms` (OpenAI's), else `retry-after` as seconds
 * or an HTTP date. Undefined when absent or unparsable.
 */
export function retryAfterMs(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "") {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers.get("retry-after");
  if (after === null || after.trim() === "") return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with up to 25 % jitter, so concurrent clients do not retry in lockstep. */
export function backoffDelayMs(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const delay = Math.min(options.baseDelayMs * 2 ** attempt, options.maxDelayMs);
  return delay * (1 - random() * 0.25);
}

/** Resolves after `ms`, or rejects with `CancelledError` as soon as `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new CancelledError());
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new CancelledError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
