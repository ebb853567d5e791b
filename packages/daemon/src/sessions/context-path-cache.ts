/**
 * The latest context path read for each of a few sessions, parsed and counted, so the next read
 * of that session fetches only what it does not share with it: nothing for the same leaf (a
 * client building its context again), a few rows for a leaf some appends further (the next
 * turn), nothing for an ancestor (turn/end looking at the path before the reply). Entries never
 * change once written, and the store checks that the session and the compaction are still the
 * ones the path was read under, so a reused row is always the row the database holds.
 *
 * Bounded by the JSON size of the paths it holds, whatever the sessions' sizes: a path above
 * `maxPathChars` is not kept, and the least recently used paths go first.
 */
import type { ContextPathRows, KnownContextPath, StoredEntry } from "../store/index.js";

export interface ContextPathCacheLimits {
  /** Sessions whose latest path is kept. */
  sessions: number;
  /** A path whose stored JSON is longer is not kept (an uncompacted session of many MB). */
  maxPathChars: number;
  /** All kept paths together. */
  maxTotalChars: number;
}

export const DEFAULT_CONTEXT_PATH_CACHE_LIMITS: ContextPathCacheLimits = {
  sessions: 8,
  maxPathChars: 8 * 1024 * 1024,
  maxTotalChars: 24 * 1024 * 1024,
};

interface CachedPath {
  known: KnownContextPath;
  chars: number;
}

export class ContextPathCache {
  /** Map order is recency: the last entry was used last. */
  private readonly paths = new Map<string, CachedPath>();
  private totalChars = 0;

  constructor(private readonly limits: ContextPathCacheLimits = DEFAULT_CONTEXT_PATH_CACHE_LIMITS) {}

  /** What is known of the session's latest path, for `SessionStore.contextPath`. */
  get(sessionId: string): KnownContextPath | undefined {
    const cached = this.paths.get(sessionId);
    if (!cached) return undefined;
    this.paths.delete(sessionId);
    this.paths.set(sessionId, cached);
    return cached.known;
  }

  /**
   * Keeps the path just read. Not kept when it lacks what reuse needs, or when an entry had no
   * stored count (the reader computed it, or fell back to an estimate: the next read takes the
   * stored one).
   */
  remember(sessionId: string, rows: ContextPathRows): void {
    this.forget(sessionId);
    if (rows.minDepth === undefined || rows.sessionStamp === undefined || rows.entries.length === 0) return;
    let chars = 0;
    for (const stored of rows.entries) {
      if (stored.tokens === null) return;
      chars += stored.jsonChars ?? 0;
    }
    const entries = rows.entries;
    const byId = new Map<string, StoredEntry>();
    for (const extra of [rows.compaction, rows.modelChange, rows.modelEntry, rows.thinkingLevelChange]) {
      if (!extra) continue;
      byId.set(extra.entry.id, extra);
      chars += extra.jsonChars ?? 0;
    }
    if (chars > this.limits.maxPathChars) return;
    this.paths.set(sessionId, { known: { sessionStamp: rows.sessionStamp, minDepth: rows.minDepth, entries, byId }, chars });
    this.totalChars += chars;
    for (const [oldest, cached] of this.paths) {
      if (this.paths.size <= this.limits.sessions && this.totalChars <= this.limits.maxTotalChars) break;
      this.paths.delete(oldest);
      this.totalChars -= cached.chars;
    }
  }

  forget(sessionId: string): void {
    const cached = this.paths.get(sessionId);
    if (!cached) return;
    this.paths.delete(sessionId);
    this.totalChars -= cached.chars;
  }
}
