/**
 * When to start a daemon again after it died: soon after a first death, then less and less often,
 * and never in a tight loop. A daemon that ran for a while before dying starts the count afresh;
 * after `maxAttempts` deaths in a row the extension stops and says why (a daemon that cannot start
 * will not start by being retried forever).
 */
export interface BackoffOptions {
  firstDelayMs: number;
  maxDelayMs: number;
  /** A daemon that ran this long died of something new: the count starts again. */
  resetAfterMs: number;
  maxAttempts: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { firstDelayMs: 500, maxDelayMs: 30_000, resetAfterMs: 60_000, maxAttempts: 6 };

export class Backoff {
  private attempts = 0;

  constructor(private readonly options: BackoffOptions = DEFAULT_BACKOFF) {}

  /**
   * Called when a daemon died after running `ranMs`: the delay before the next start, or
   * undefined when the extension should give up.
   */
  next(ranMs: number): number | undefined {
    if (ranMs >= this.options.resetAfterMs) this.attempts = 0;
    if (this.attempts >= this.options.maxAttempts) return undefined;
    const delay = Math.min(this.options.maxDelayMs, this.options.firstDelayMs * 2 ** this.attempts);
    this.attempts++;
    return delay;
  }

  /** A start the user asked for: the count starts again. */
  reset(): void {
    this.attempts = 0;
  }

  get failures(): number {
    return this.attempts;
  }
}
