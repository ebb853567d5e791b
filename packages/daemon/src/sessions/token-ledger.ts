/**
 * Token counts and their ordering. Counting is async (a 10 MB entry goes to a worker), but appends
 * to a session must apply in arrival order, so an append is stored *synchronously* on arrival with
 * tokens NULL, and the counts are stored when they resolve, all of one append or read in one
 * transaction. (When the counter can count the entries
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
  /** Counts being computed, shared by every reader that needs them (undefined: counting failed). */
  private readonly inFlight = new Map<string, Promise<number | undefined>>();

  constructor(
    private readonly store: SessionStore,
    private readonly counter: TokenCounter,
  ) {}

  /**
   * Stored entries with their counts. Missing ones are computed in parallel and stored together,
   * in one transaction, before this resolves (an appendMany of a thousand entries writes once).
   */
  async withCounts(sessionId: string, stored: readonly StoredEntry[]): Promise<CountedEntry[]> {
    // The usual case (every count stored) without a promise per entry: a context path has thousands.
    if (stored.every((item) => item.tokens !== null)) {
      return stored.map((item) => ({ entry: item.entry, tokens: item.tokens! }));
    }
    const computed = await Promise.all(stored.map((item) => (item.tokens === null ? this.compute(sessionId, item.entry) : undefined)));
    const fresh: { id: string; tokens: number }[] = [];
    const counted = stored.map((item, index) => {
      if (item.tokens !== null) return { entry: item.entry, tokens: item.tokens };
      const tokens = computed[index];
      if (tokens === undefined) {
        // The row keeps NULL so a later reader tries again; this reply gets a rough estimate.
        return { entry: item.entry, tokens: Math.ceil(JSON.stringify(item.entry).length / 4) };
      }
      fresh.push({ id: item.entry.id, tokens });
      return { entry: item.entry, tokens };
    });
    try {
      this.store.setTokensMany(sessionId, fresh);
    } catch (error) {
      // The store may have closed during shutdown, or the session was deleted: the counts still answer.
      log("debug", `could not store ${fresh.length} token count(s) of session "${sessionId}": ${(error as Error).message}`);
    }
    return counted;
  }

  /** One entry's count, shared with concurrent readers of the same entry; undefined when counting failed. */
  private compute(sessionId: string, entry: SessionEntry): Promise<number | undefined> {
    const key = `${sessionId}\u0000${entry.id}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.counter.countEntry(entry).then(
        (tokens) => tokens,
        (error: unknown) => {
          log("warn", `token count of entry "${entry.id}" failed: ${(error as Error).message}`);
          return undefined;
        },
      );
      pending = pending.finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }
}
