/**
 * The user's prompts, in order. The loop takes one when a turn is over and tells the daemon how
 * many are waiting (`turn/end { queuedInputs }`); the CLI fills it from its arguments, or line by
 * line from stdin while the loop runs.
 */
export class Inbox {
  private readonly items: string[] = [];
  private closed = false;
  private wake: (() => void) | undefined;

  constructor(prompts: Iterable<string> = []) {
    for (const prompt of prompts) this.push(prompt);
  }

  /** Prompts accepted and not taken yet. */
  get size(): number {
    return this.items.length;
  }

  push(prompt: string): void {
    if (this.closed) throw new Error("the inbox is closed");
    this.items.push(prompt);
    this.wakeUp();
  }

  /** No more prompts will come: `next()` answers undefined once the queue is empty. */
  close(): void {
    this.closed = true;
    this.wakeUp();
  }

  /** Takes everything still queued (prompts the loop will not send). */
  drain(): string[] {
    return this.items.splice(0);
  }

  /** The next prompt, waiting for one; undefined when the inbox is closed and empty, or on abort. */
  async next(signal?: AbortSignal): Promise<string | undefined> {
    while (this.items.length === 0 && !this.closed && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal?.removeEventListener("abort", done);
          this.wake = undefined;
          resolve();
        };
        this.wake = done;
        signal?.addEventListener("abort", done, { once: true });
      });
    }
    return signal?.aborted ? undefined : this.items.shift();
  }

  private wakeUp(): void {
    this.wake?.();
  }
}
