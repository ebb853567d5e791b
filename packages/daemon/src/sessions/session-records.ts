/**
 * What the rest of the daemon may read and write of the store besides appends and context paths
 * (which go through SessionService's own methods): session rows, single entries, whole paths,
 * leaf moves, request results and the compaction jobs table. Compaction and tree navigation use
 * it; the store itself stays inside sessions/, so nothing outside can delete a session, append
 * without the entry size check and token counts, or read rows the context path cache depends on.
 *
 * SessionService hands out its store typed as this interface: no wrapper, so the compaction
 * commit and navigation cost exactly what they did.
 */
import type { AppendOutcome, AppendRequest, CompactionJobs, SessionRecord, StoredEntry, StoredRequestResult } from "../store/index.js";

export interface SessionRecords {
  /** The session's row, or undefined. */
  getSession(sessionId: string): SessionRecord | undefined;
  /** The session's row; AppError session_not_found when there is none. */
  requireSession(sessionId: string): SessionRecord;
  getEntry(sessionId: string, entryId: string): StoredEntry | undefined;
  /** Whether the session has the entry, without reading and parsing its JSON. */
  hasEntry(sessionId: string, entryId: string): boolean;
  /** The whole path root → leaf (`leafId` undefined = current leaf, null = empty), without token counts. */
  path(sessionId: string, leafId?: string | null): StoredEntry[];
  setLeaf(sessionId: string, leafId: string | null): void;
  /** Moves the leaf only if it is still `from`, with the request's result in the same transaction. */
  moveLeafIf(
    sessionId: string,
    move: { from: string | null; to: string | null; request?: { id: string; method: string; result: unknown } },
  ): { moved: true } | { moved: false; leafId: string | null };
  /**
   * An append and what records it (a compaction job's new state) in one transaction. Unlike
   * SessionService.appendEntries it neither checks entry sizes nor counts tokens: for entries the
   * daemon wrote itself (summaries, prunes), counted later by whoever reads them.
   */
  appendRecorded(request: AppendRequest, record: (outcome: AppendOutcome) => void): AppendOutcome;
  /** A stored request result (AppError request_id_conflict if the id was used by another method). */
  findRequestResult(sessionId: string, requestId: string, method: string): StoredRequestResult | undefined;
  saveRequestResult(sessionId: string, requestId: string, method: string, result: unknown): void;
  /** Durable compaction jobs (compaction/status, interrupted-run detection). */
  readonly jobs: CompactionJobs;
}
