/**
 * Which path entries the context holds (docs/design.md#what-a-context-holds): with no compaction, every context-visible
 * entry; with one, the latest compaction's summary, the kept entries from its `firstKeptEntryId`
 * up to it, then everything after it. Shared by the context builder and the usage estimate so
 * both always count the same entries.
 */
import type { CompactionEntry } from "@base-context/protocol";
import { isContextVisible } from "./entry-messages.js";
import type { CountedEntry } from "./types.js";

export interface CountedCompaction extends CountedEntry {
  readonly entry: CompactionEntry;
}

export interface ContextSelection {
  /** The latest compaction on the path; its summary opens the context. */
  readonly compaction?: CountedCompaction;
  /** Context-visible entries from the compaction's firstKeptEntryId up to the compaction. */
  readonly keptBeforeCompaction: readonly CountedEntry[];
  /** Context-visible entries after the compaction (the whole path when there is none). */
  readonly afterCompaction: readonly CountedEntry[];
  /**
   * False when the compaction names a first kept entry that is not on the given path before it
   * (a damaged or partially imported session): the kept tail is then unknown.
   */
  readonly firstKeptFound: boolean;
}

/** Index of the latest compaction on the path, or -1. */
export function latestCompactionIndex(path: readonly CountedEntry[]): number {
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i]!.entry.type === "compaction") return i;
  }
  return -1;
}

export function selectContextEntries(path: readonly CountedEntry[]): ContextSelection {
  const compactionIndex = latestCompactionIndex(path);
  if (compactionIndex < 0) {
    return {
      keptBeforeCompaction: [],
      afterCompaction: path.filter((item) => isContextVisible(item.entry)),
      firstKeptFound: true,
    };
  }
  const compaction = path[compactionIndex] as CountedCompaction;
  const firstKeptIndex = path.findIndex((item) => item.entry.id === compaction.entry.firstKeptEntryId);
  const firstKeptFound = firstKeptIndex >= 0 && firstKeptIndex < compactionIndex;
  const keptBeforeCompaction = firstKeptFound
    ? path.slice(firstKeptIndex, compactionIndex).filter((item) => isContextVisible(item.entry))
    : [];
  return {
    compaction,
    keptBeforeCompaction,
    afterCompaction: path.slice(compactionIndex + 1).filter((item) => isContextVisible(item.entry)),
    firstKeptFound,
  };
}

export function sumTokens(items: readonly CountedEntry[]): number {
  let total = 0;
  for (const item of items) total += item.tokens;
  return total;
}

/** Sum of the stored counts of everything the context holds, the summary included. */
export function selectionTokens(selection: ContextSelection): number {
  return (
    (selection.compaction?.tokens ?? 0) +
    sumTokens(selection.keptBeforeCompaction) +
    sumTokens(selection.afterCompaction)
  );
}
