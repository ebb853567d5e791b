/**
 * What a compaction summary must keep (docs/retention.md): the probes of everything it replaces —
 * the summarized messages, the split turn's prefix, the file lists, and what the previous summary
 * carried — then the check, and the repair when `summary.repair` is on.
 */
import type { CompactionPreparation, RetentionReport } from "@base-context/protocol";
import {
  carriedProbes,
  emptyProbes,
  isCheckedCompaction,
  mergeProbes,
  probeMessages,
  repairBudgetTokens,
  retainSummary,
  summaryMaxTokens,
  type RetentionProbes,
  type SummaryBudget,
} from "@base-context/core";
import type { ContextPath, CountedEntry, SessionService } from "../sessions/index.js";

/**
 * The path a compaction is prepared from: the context path, or, when its latest compaction is
 * another agent's (not checked by us when written), the whole path to the same leaf, so that
 * preparation restores that summary from the messages it replaced (core's `restoredSummary`).
 */
export async function preparationPath(sessions: SessionService, sessionId: string, path: ContextPath): Promise<readonly CountedEntry[]> {
  if (path.compaction === undefined || isCheckedCompaction(path.compaction)) return path.entries;
  return sessions.getCountedPath(sessionId, path.leafId);
}

export function compactionProbes(preparation: CompactionPreparation): RetentionProbes {
  const listed = emptyProbes();
  for (const file of preparation.fileOps.modifiedFiles) listed.files.push({ text: file, index: -1, detail: "modified" });
  for (const file of preparation.fileOps.readFiles) listed.files.push({ text: file, index: -1, detail: "read" });
  const carried = carriedProbes(preparation.previousSummary);
  return mergeProbes(
    // The earlier summary's errors are read with the range: what it fixed is fixed.
    { ...carried, errors: [] },
    listed,
    // One pass over both: the turn's prefix follows the range directly, and what it fixed is fixed.
    probeMessages([...preparation.messagesToSummarize, ...preparation.turnPrefixMessages], carried.errors),
  );
}

/**
 * The summary checked, repaired when asked, and capped at `limits.maxSummaryBytes` or, with a
 * window, at the window's summary budget (repair lines included) when that is less.
 */
export function retainCompactionSummary(
  preparation: CompactionPreparation,
  summary: string,
  options: { repair: boolean; maxBytes: number; budget?: SummaryBudget | undefined },
): { summary: string; retention: RetentionReport } {
  const { repair, maxBytes, budget } = options;
  const probes = compactionProbes(preparation);
  if (budget && budget.maxBytes < maxBytes) {
    const { repairTokens: budgetTokens, maxBytes: budgetBytes, limitName } = budget;
    return retainSummary(summary, probes, { repair, budgetTokens, maxBytes: budgetBytes, limitName });
  }
  const budgetTokens = budget?.repairTokens ?? repairBudgetTokens(summaryMaxTokens("history", preparation.settings.reserveTokens));
  return retainSummary(summary, probes, { repair, budgetTokens, maxBytes });
}
