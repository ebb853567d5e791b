/**
 * Counts worker deaths of one plugin in a sliding window. A plugin that keeps crashing is disabled
 * rather than restarted forever; saving one of its files (a new version) resets the count.
 */
export class CrashBreaker {
  private deaths: number[] = [];

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a death; true when it makes `limit` deaths within the window (the plugin must stop). */
  record(): boolean {
    const now = this.now();
    this.deaths = this.deaths.filter((at) => now - at < this.windowMs);
    this.deaths.push(now);
    return this.deaths.length >= this.limit;
  }

  reset(): void {
    this.deaths = [];
  }
}
