/**
 * Token counts and their ordering. Counting is async (a 10 MB entry goes to a worker), but appends
 * to a session must apply in arrival order, so an append is stored *synchronously* on arrival with
 * tokens NULL, and the count is stored when it resolves. (When the counter can count the entries
 * on the spot — small entries, encoding loaded on this thread — the append carries its counts and
 * nothing is left to do here.) Nothing waits for a count except the
 * reply of the append that needs it and readers that need that entry's count: they share the
 * in-flight count (or compute a missing one — e.g. lost in a crash — and store it).
 */
import type { SessionEntry } from "@base-context/protocol";
import { log } from "../log.js";
import type { SessionStore, StoredEntry } from "../store/index.js";
import type { TokenCounter } from "../tokens/counter.js";

/** A path entry with its token count (0 for entries that are not in the context). */
export interface CountedEntry {
  readonly entry: SessionEntry;
  readonly tokens: number;
}

export class TokenLedger {
  private readonly inFlight = new Map<string, Promise<number>>();

  constructor(
    private readonly store: SessionStore,
    private readonly counter: TokenCounter,
  ) {}

  /** Counts an entry whose row has tokens NULL and stores the count. Concurrent callers share one count. */
  count(sessionId: string, entry: SessionEntry): Promise<number> {
    const key = `${sessionId}\u0000${entry.id}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.countAndStore(sessionId, entry).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** Stored entries with their counts, computing the missing ones in parallel. */
  async withCounts(sessionId: string, stored: readonly StoredEntry[]): Promise<CountedEntry[]> {
    // The usual case (every count stored) without a promise per entry: a context path has thousands.
    if (stored.every((item) => item.tokens !== null)) {
      return stored.map((item) => ({ entry: item.entry, tokens: item.tokens! }));
    }
    const tokens = await Promise.all(
      stored.map((item) => (item.tokens === null ? this.count(sessionId, item.entry) : item.tokens)),
    );
    return stored.map((item, index) => ({ entry: item.entry, tokens: tokens[index]! }));
  }

  private async countAndStore(sessionId: string, entry: SessionEntry): Promise<number> {
    let tokens: number;
    try {
      tokens = await this.counter.countEntry(entry);
    } catch (error) {
      // The row keeps NULL so a later reader tries again; this reply gets a rough estimate.
      log("warn", `token count of entry "${entry.id}" failed: ${(error as Error).message}`);
      return Math.ceil(JSON.stringify(entry).length / 4);
    }
    try {
      this.store.setTokens(sessionId, entry.id, tokens);
    } catch (error) {
      // The store may have closed during shutdown, or the session was deleted: the count still answers.
      log("debug", `could not store the token count of entry "${entry.id}": ${(error as Error).message}`);
    }
    return tokens;
  }
}
