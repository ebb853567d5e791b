/**
 * Requests still running, by session and requestId: a retry of one that has not answered yet
 * joins it (gets the same promise) instead of starting the work again or being refused.
 */
export class InFlightRequests<T> {
  private readonly running = new Map<string, Promise<T>>();

  get(sessionId: string, requestId: string): Promise<T> | undefined {
    return this.running.get(key(sessionId, requestId));
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
