/**
 * The range a compaction replaced, and another agent's summary restored from it (docs/retention.md
 * "Restoring another agent's summary"). A compaction this daemon wrote was checked and repaired
 * when it was made; one imported from pi, Claude Code or Codex never was, and what it lost would
 * be copied by every summary updating it. The messages it replaced are still on the path, before
 * its first kept entry: the summary is repaired against them before an update reads it.
 */
import type { CompactionEntry, ContextMessage } from "@base-context/protocol";
import { entryToContextMessage } from "../entry-messages.js";
import { carriedProbes, restoreSummary } from "../retention/repair.js";
import { mergeProbes, probeMessages } from "../retention/probes.js";
import type { CountedEntry } from "../types.js";

/**
 * Where the range to summarize starts: the previous compaction's first kept entry when it lies
 * on the path before that compaction (its kept tail is summarized again, with the previous
 * summary as context); otherwise right after the previous compaction; with none, the start.
 */
export function compactionRangeStart(path: readonly CountedEntry[], previousCompactionIndex: number): number {
  if (previousCompactionIndex < 0) return 0;
  const previous = path[previousCompactionIndex]!.entry as CompactionEntry;
  const firstKeptIndex = path.findIndex((item) => item.entry.id === previous.firstKeptEntryId);
  return firstKeptIndex >= 0 && firstKeptIndex < previousCompactionIndex ? firstKeptIndex : previousCompactionIndex + 1;
}

export interface CollectedMessages {
  messages: ContextMessage[];
  entryIds: string[];
}

/** The messages of `path[start..end)`, with the ids of their entries. */
export function collectMessages(path: readonly CountedEntry[], start: number, end: number): CollectedMessages {
  const messages: ContextMessage[] = [];
  const entryIds: string[] = [];
  for (let i = start; i < end; i++) {
    const entry = path[i]!.entry;
    const message = entryToContextMessage(entry);
    if (!message) continue;
    messages.push(message);
    entryIds.push(entry.id);
  }
  return { messages, entryIds };
}

/** The agents whose compactions the import marks (`details.source`): checked at import, never repaired. */
const IMPORTED_SOURCES = new Set(["claude-code", "codex"]);

/**
 * A compaction this daemon wrote, checked and repaired then: its details hold the retention
 * report (`detailsWithRetention`). Not pi's (no report), nor Claude Code's or Codex's, whose
 * import stores a report beside `source` but repairs nothing.
 */
export function isCheckedCompaction(entry: CompactionEntry): boolean {
  const details = entry.details;
  if (typeof details !== "object" || details === null || Array.isArray(details) || !("retention" in details)) return false;
  const source = (details as { source?: unknown }).source;
  return !(typeof source === "string" && IMPORTED_SOURCES.has(source));
}

function previousCompactionIndex(path: readonly CountedEntry[], before: number): number {
  for (let i = before - 1; i >= 0; i--) if (path[i]!.entry.type === "compaction") return i;
  return -1;
}

/**
 * The summary of the compaction at `index` as an update should read it: as stored when this
 * daemon wrote it; another agent's repaired against the messages it replaced (from the compaction
 * it updated, restored first in a chain, or the root, up to its first kept entry). Only when `path`
 * starts at the root: a suffix does not hold the range.
 */
export function restoredSummary(path: readonly CountedEntry[], index: number, budgetTokens: number): string {
  const compaction = path[index]!.entry as CompactionEntry;
  if (isCheckedCompaction(compaction) || path[0]?.entry.parentId !== null) return compaction.summary;
  const firstKept = path.findIndex((item) => item.entry.id === compaction.firstKeptEntryId);
  // Its first kept entry is not on the path before it (an imported file's dangling id): no range to read.
  if (firstKept < 0 || firstKept > index) return compaction.summary;
  // The compaction it updated: the latest before it whose range starts before its first kept entry
  // (one made after the first kept entry, as on a branch tried meanwhile, is not what it read).
  let before = previousCompactionIndex(path, index);
  while (before >= 0 && compactionRangeStart(path, before) >= firstKept) before = previousCompactionIndex(path, before);
  const start = compactionRangeStart(path, before);
  if (start >= firstKept) return compaction.summary;
  const earlier = before >= 0 ? restoredSummary(path, before, budgetTokens) : undefined;
  const carried = carriedProbes(earlier);
  const probes = mergeProbes({ ...carried, errors: [] }, probeMessages(collectMessages(path, start, firstKept).messages, carried.errors));
  return restoreSummary(compaction.summary, probes, budgetTokens).summary;
}
