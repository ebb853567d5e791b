/**
 * What the checkpointer (checkpointer.ts) and its thread (checkpoint-worker.ts) tell each other,
 * in the envelope of every worker (../../worker-messages.ts).
 */

/** Pages one merge step of the search index writes at most (a step holds the write lock briefly). */
export const MERGE_PAGES = 64;
/** Pause between two merge steps, leaving the write lock to whoever wants it. */
export const MERGE_PAUSE_MS = 20;

export interface CheckpointerData {
  databasePath: string;
  /** Wait this long after a write before checkpointing. */
  delayMs: number;
  /** Merge the search index only after the database has been idle this long. */
  mergeIdleMs: number;
}

export type ToCheckpointer = { t: "write" } | { t: "close" };

export interface DoneMessage {
  t: "done";
  /** What ended: a checkpoint (the answer to a "write") or merging the search index while idle. */
  of: "checkpoint" | "merge";
  error?: string;
  /** Merge steps of the search index run since the last message. */
  merged: number;
}
