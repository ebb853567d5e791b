/**
 * Token counts and their ordering. Counting is async (in the counting worker: the encoding is
 * loaded there and nowhere else), but appends to a session must apply in arrival order, so an
 * append is stored *synchronously* on arrival with tokens NULL, and the counts are stored when
 * they resolve. (When the counter can count the entries on the spot — chars4 — the append carries
 * its counts and nothing is left to do here.) Nothing waits for a count except the reply of the
 * append that needs it and readers that need that entry's count: they share the in-flight count
 * (or compute a missing one — e.g. lost in a crash — and store it).
 *
 * An append's counts are stored with the next write (`SessionStore.setTokensSoon`), not in a
 * transaction of their own: taking the write lock twice per append is what made four daemons on
 * one database wait for each other. Until they are written this ledger keeps them, so readers in
 * this process never count an entry twice; a reader in another process that finds NULL counts it
 * itself, as it would after a crash.
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
  /** Counts computed but not written yet (`setTokensSoon`), by entry key. */
  private readonly unwritten = new Map<string, number>();

  constructor(
    private readonly store: SessionStore,
    private readonly counter: TokenCounter,
  ) {}

  /**
   * Stored entries with their counts. Missing ones are computed in parallel and stored together,
   * in one transaction (an appendMany of a thousand entries writes once): before this resolves,
   * or with the store's next write when `writeWithNext` (appends: see the top of this file).
   */
  async withCounts(sessionId: string, stored: readonly StoredEntry[], writeWithNext = false): Promise<CountedEntry[]> {
    // The usual case (every count stored) without a promise per entry: a context path has thousands.
    if (stored.every((item) => item.tokens !== null)) {
      return stored.map((item) => ({ entry: item.entry, tokens: item.tokens! }));
    }
    const computed = await Promise.all(stored.map((item) => (item.tokens === null ? this.compute(sessionId, item) : undefined)));
    const fresh: { id: string; seq: number; tokens: number }[] = [];
    const counted = stored.map((item, index) => {
      if (item.tokens !== null) return { entry: item.entry, tokens: item.tokens };
      const tokens = computed[index];
      if (tokens === undefined) {
        // The row keeps NULL so a later reader tries again; this reply gets a rough estimate.
        return { entry: item.entry, tokens: Math.ceil(JSON.stringify(item.entry).length / 4) };
      }
      fresh.push({ id: item.entry.id, seq: item.seq, tokens });
      return { entry: item.entry, tokens };
    });
    if (writeWithNext) {
      this.writeSoon(sessionId, fresh);
      return counted;
    }
    try {
      this.store.setTokensMany(sessionId, fresh);
    } catch (error) {
      // The store may have closed during shutdown, or the session was deleted: the counts still answer.
      log("debug", `could not store ${fresh.length} token count(s) of session "${sessionId}": ${(error as Error).message}`);
    }
    return counted;
  }

  /** Hands counts to the store's next write, keeping them here until it has written them. */
  private writeSoon(sessionId: string, fresh: readonly { id: string; seq: number; tokens: number }[]): void {
    const keys = fresh.map(({ id, seq }) => entryKey(sessionId, id, seq));
    fresh.forEach(({ tokens }, index) => this.unwritten.set(keys[index]!, tokens));
    const forget = (stored: boolean) => {
      if (!stored) {
        log("debug", `could not store ${fresh.length} token count(s) of session "${sessionId}"; they are counted again when read`);
      }
      for (const key of keys) this.unwritten.delete(key);
    };
    try {
      this.store.setTokensSoon(sessionId, fresh, forget);
    } catch (error) {
      log("debug", `could not store ${fresh.length} token count(s) of session "${sessionId}": ${(error as Error).message}`);
      forget(true);
    }
  }

  /** One entry's count, shared with concurrent readers of the same entry; undefined when counting failed. */
  private compute(sessionId: string, stored: StoredEntry): Promise<number | undefined> {
    const { entry } = stored;
    const key = entryKey(sessionId, entry.id, stored.seq);
    const unwritten = this.unwritten.get(key);
    if (unwritten !== undefined) return Promise.resolve(unwritten);
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

/**
 * With the row's seq: a session deleted and written again with the same entry ids (by another
 * daemon) has other rows, and no count of the first may be taken for them (docs/storage.md).
 */
function entryKey(sessionId: string, entryId: string, seq: number): string {
  return `${sessionId}\u0000${entryId}\u0000${seq}`;
}
