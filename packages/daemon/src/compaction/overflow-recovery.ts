/**
 * "Compact once, then give up" (docs/design.md#overflow): after an overflow compaction, a second overflow
 * before a successful turn or new input reports failure instead of compacting again. The state
 * is read from the session path, never kept in memory, so a daemon restart cannot forget it and
 * two daemons sharing the database agree.
 */
import type { CompactionEntry } from "@base-context/protocol";
import type { CountedEntry } from "@base-context/core";
import { isTurnInput } from "./turn-end-reply.js";

/**
 * Walks back from the end of `path` (the path before the failing reply): an overflow compaction
 * met before any new input or successful reply means the one recovery was spent. Compactions
 * for other reasons (manual, threshold) neither spend nor restore it.
 */
export function overflowAlreadyRecovered(
  path: readonly CountedEntry[],
  isOverflowCompaction: (entry: CompactionEntry) => boolean,
): boolean {
  for (let i = path.length - 1; i >= 0; i--) {
    const { entry } = path[i]!;
    if (entry.type === "compaction") {
      if (isOverflowCompaction(entry)) return true;
      continue;
    }
    if (isTurnInput(entry)) return false;
    if (entry.type === "message" && entry.message.role === "assistant") {
      const { stopReason } = entry.message;
      if (stopReason !== "error" && stopReason !== "aborted") return false;
    }
  }
  return false;
}
