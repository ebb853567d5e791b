/**
 * Filling in token counts that are missing: an import stores its entries without counts (counting
 * 100k entries would double its time), and a crash loses the counts of appends in flight. The
 * backfill counts them in the background, a small batch at a time, newest entries first (those
 * are the ones a context holds), through the counter's lowest-priority lane, only when the
 * daemon has nothing else to do (`whenIdle`), and resting between batches as long as a share
 * of the time (`dutyCycle`): a daemon idle between an agent's turns must not take a whole core
 * from the machine for the 15 s that 100k entries take. Nobody waits for it: a reader that needs
 * a count that is still missing computes it on demand (TokenLedger), as before.
 *
 * Several processes may backfill one database: they may count an entry twice, never wrongly
 * (a count depends only on the entry).
 */
import { log } from "../log.js";
import type { SessionStore, StoredEntry } from "../store/index.js";
import type { TokenCounter } from "../tokens/counter.js";

export interface TokenBackfillOptions {
  /**
   * Resolves when the next batch may run. Default: at the next turn of the event loop (the
   * daemon passes "when no request has been seen for a moment").
   */
  whenIdle?: () => Promise<void>;
  /** Entries read and counted per batch. */
  batchSize?: number;
  /**
   * Share of the time spent counting (0 < dutyCycle ≤ 1): after a batch that took t, the
   * backfill rests t × (1 − dutyCycle) / dutyCycle before the next one. Default 0.5.
   */
  dutyCycle?: number;
}

const ALL_SESSIONS = "\u0000all";
const DEFAULT_BATCH_SIZE = 64;
const DEFAULT_DUTY_CYCLE = 0.5;

export class TokenBackfill {
  private readonly pending = new Set<string>();
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly whenIdle: () => Promise<void>;
  private readonly batchSize: number;
  /** Rest after a batch, per ms the batch took. */
  private readonly restPerMs: number;

  constructor(
    private readonly store: SessionStore,
    private readonly counter: TokenCounter,
    options: TokenBackfillOptions = {},
  ) {
    this.whenIdle = options.whenIdle ?? (() => new Promise((resolve) => setImmediate(resolve)));
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    const duty = Math.min(1, Math.max(0.01, options.dutyCycle ?? DEFAULT_DUTY_CYCLE));
    this.restPerMs = (1 - duty) / duty;
  }

  /** Fills the missing counts of a session (of every session when undefined), after what is already scheduled. */
  schedule(sessionId?: string): void {
    if (this.stopped) return;
    this.pending.add(sessionId ?? ALL_SESSIONS);
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once everything scheduled so far is done (tests and benches). */
  async done(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops after the batch in progress; nothing is scheduled any more. */
  stop(): void {
    this.stopped = true;
    this.pending.clear();
  }

  private async run(): Promise<void> {
    try {
      while (!this.stopped && this.pending.size > 0) {
        const next = this.pending.values().next().value as string;
        this.pending.delete(next);
        await this.whenIdle();
        if (this.stopped) break;
        const sessions = next === ALL_SESSIONS ? this.store.sessionsWithUncountedEntries() : [next];
        for (const sessionId of sessions) await this.fillSession(sessionId);
      }
    } catch (error) {
      // The counter or the store went away (shutdown), or a count failed: the counts stay
      // missing and are computed when read; the next schedule() tries again.
      log("debug", `token backfill stopped: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Newest first, a batch at a time: read it, count it in the worker, store its counts, rest. */
  private async fillSession(sessionId: string): Promise<void> {
    let beforeSeq = Number.MAX_SAFE_INTEGER;
    for (;;) {
      await this.whenIdle();
      if (this.stopped) return;
      const started = performance.now();
      const batch = this.store.uncountedEntries(sessionId, this.batchSize, beforeSeq);
      if (batch.length === 0) return;
      beforeSeq = batch[batch.length - 1]!.seq;
      await this.countBatch(sessionId, batch);
      const rest = (performance.now() - started) * this.restPerMs;
      if (rest >= 1) await new Promise((resolve) => setTimeout(resolve, rest).unref());
    }
  }

  private async countBatch(sessionId: string, batch: StoredEntry[]): Promise<void> {
    const entries = batch.map((stored) => stored.entry);
    const counts = this.counter.countEntriesInBackground
      ? await this.counter.countEntriesInBackground(entries)
      : await Promise.all(entries.map((entry) => this.counter.countEntry(entry)));
    if (this.stopped) return;
    this.store.setTokensMany(
      sessionId,
      batch.map((stored, index) => ({ id: stored.entry.id, seq: stored.seq, tokens: counts[index]! })),
    );
  }
}
