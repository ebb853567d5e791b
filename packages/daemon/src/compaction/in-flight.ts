import { CancelledError } from "../errors.js";

/**
 * Requests still running, by session and requestId: a retry of one that has not answered yet
 * joins it (gets its outcome) instead of starting the work again or being refused.
 */
export class InFlightRequests<T> {
  private readonly running = new Map<string, Promise<T>>();

  /**
   * The running work's outcome, for a request that joins it. The joiner's own cancellation
   * (`signal`: its `$/cancelRequest`, or its connection's `shutdown`) ends its wait with
   * CancelledError; the work goes on for the request that started it.
   */
  get(sessionId: string, requestId: string, signal?: AbortSignal): Promise<T> | undefined {
    const work = this.running.get(key(sessionId, requestId));
    if (!work || !signal) return work;
    const cancelled = () => (signal.reason instanceof CancelledError ? signal.reason : new CancelledError());
    if (signal.aborted) return Promise.reject(cancelled());
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(cancelled());
      signal.addEventListener("abort", onAbort, { once: true });
      const settled = () => signal.removeEventListener("abort", onAbort);
      work.then(
        (value) => {
          settled();
          resolve(value);
        },
        (error: unknown) => {
          settled();
          reject(error);
        },
      );
    });
  }

  /** Keeps `work` joinable until it settles, however it settles; returns it. */
  track(sessionId: string, requestId: string, work: Promise<T>): Promise<T> {
    const k = key(sessionId, requestId);
    this.running.set(k, work);
    const done = () => {
      // A later request with the same key may have replaced this one after it settled.
      if (this.running.get(k) === work) this.running.delete(k);
    };
    work.then(done, done);
    return work;
  }
}

function key(sessionId: string, requestId: string): string {
  return `${sessionId}\u0000${requestId}`;
}
