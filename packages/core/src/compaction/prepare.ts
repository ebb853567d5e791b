/**
 * Compaction preparation (docs/design.md#compaction): from the path and the settings, decide what would be
 * summarized and what kept, without side effects. The result is what plugins receive in
 * `session_before_compact` and what the summarizers work from.
 */
import type {
  CompactionEntry,
  CompactionPreparation,
  CompactionSettings,
} from "@base-context/protocol";
import { latestCompactionIndex } from "../context-selection.js";
import { addFileOpsFromDetails, addFileOpsFromPrevious, computeFileLists, createFileOps, extractFileOpsFromMessage } from "../file-ops.js";
import type { CountedEntry } from "../types.js";
import { planFrom, planTailPrune, prunedOutputs, withPlan, withPrunedCounts, type PrunePlan } from "../prune.js";
import { fitPlan, tokensFrom } from "../prune-fit.js";
import { estimateContextTokens } from "../usage.js";
import { repairBudgetTokens } from "../retention/repair.js";
import { findCutPoint, type CutOptions, type CutPoint } from "./cut-point.js";
import { summaryMaxTokens } from "./prompts.js";
import { collectMessages, compactionRangeStart, restoredSummary, type CollectedMessages } from "./restore.js";

export type PrepareCompactionResult = { preparation: CompactionPreparation } | { nothing: string };

/** Pruning alongside the summary (docs/compaction-rungs.md); absent: no new pruning. */
export interface PrepareCompactionOptions extends CutOptions {
  /** Tool results above this many tokens in the kept tail are hidden in the same step. */
  readonly pruneMinTokens?: number;
}

/** Why nothing would be compacted (the `nothing` of the result). */
export const NothingToCompact = {
  emptySession: "the session is empty",
  alreadyCompacted: "the last entry is already a compaction",
  noCutPoint: "no message the kept part could start with",
  nothingToSummarize: "nothing to summarize: everything fits in the kept part",
} as const;

interface Split {
  cut: CutPoint;
  history: CollectedMessages;
  turnPrefix: CollectedMessages;
}

/** The cut on `counted` (the path with the counts the context would have) and what it summarizes. */
function splitAt(
  path: readonly CountedEntry[],
  rangeStart: number,
  counted: readonly CountedEntry[],
  settings: CompactionSettings,
  cutOptions: CutOptions,
): Split | undefined {
  const cut = findCutPoint(counted, rangeStart, path.length, settings.keepRecentTokens, cutOptions);
  if (!cut) return undefined;
  const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptIndex;
  const history = collectMessages(path, rangeStart, historyEnd);
  const turnPrefix = cut.isSplitTurn ? collectMessages(path, cut.turnStartIndex, cut.firstKeptIndex) : { messages: [], entryIds: [] };
  return { cut, history, turnPrefix };
}

function isEmptySplit(split: Split): boolean {
  return split.history.messages.length === 0 && split.turnPrefix.messages.length === 0;
}

/**
 * @param path root → leaf, or a suffix starting at or before the latest compaction's
 *   firstKeptEntryId, each entry with its stored token count. When the latest compaction is
 *   another agent's (`isCheckedCompaction` false), a path from the root lets its summary be
 *   restored from the messages it replaced (`restoredSummary`) before it becomes `previousSummary`.
 */
export function prepareCompaction(
  path: readonly CountedEntry[],
  settings: CompactionSettings,
  options: PrepareCompactionOptions = {},
): PrepareCompactionResult {
  const leaf = path[path.length - 1];
  if (!leaf) return { nothing: NothingToCompact.emptySession };
  if (leaf.entry.type === "compaction") return { nothing: NothingToCompact.alreadyCompacted };

  const previousIndex = latestCompactionIndex(path);
  const previous = previousIndex >= 0 ? (path[previousIndex]!.entry as CompactionEntry) : undefined;
  const rangeStart = compactionRangeStart(path, previousIndex);

  // The cut is found on what the context would hold: hidden outputs (already, or by this step's
  // pruning) count their stubs, so the kept tail keeps conversation, not one large output.
  const hidden = prunedOutputs(path);
  const tailPlan: PrunePlan | undefined =
    options.pruneMinTokens !== undefined ? planTailPrune(path, options.pruneMinTokens, rangeStart) : undefined;
  let split =
    tailPlan && tailPlan.hidden.length > 0
      ? splitAt(path, rangeStart, withPrunedCounts(path, withPlan(hidden, tailPlan)), settings, options)
      : undefined;
  // When the stubs make everything fit in the kept part there is nothing left to summarize: a
  // summary was asked for, so cut as without this step's pruning (the kept tail is still pruned).
  if (!split || isEmptySplit(split)) split = splitAt(path, rangeStart, withPrunedCounts(path, hidden), settings, options);
  if (!split) return { nothing: NothingToCompact.noCutPoint };
  const { cut, history, turnPrefix } = split;
  if (isEmptySplit(split)) return { nothing: NothingToCompact.nothingToSummarize };
  // Outputs before the cut are summarized, not hidden: only the kept tail's are pruned, and with a
  // window never so many that the kept part holds less than keepRecentTokens.
  const tailPrune = tailPlan ? planFrom(path, tailPlan, cut.firstKeptIndex) : undefined;
  const prune =
    tailPrune && options.keepAtLeastBudget
      ? fitPlan(path, tailPrune, {
          tokens: tokensFrom(withPrunedCounts(path, hidden), cut.firstKeptIndex),
          floorTokens: settings.keepRecentTokens,
        })
      : tailPrune;

  // File lists are cumulative: the previous summary's lists (its details, or the files its text
  // names when another agent wrote it), daemon-made branch summaries being summarized now, then
  // the tool calls themselves. A plugin's `details` are its own data and are not read as file lists.
  const fileOps = createFileOps();
  if (previous && previous.fromHook !== true) addFileOpsFromPrevious(previous, fileOps);
  for (let i = rangeStart; i < cut.firstKeptIndex; i++) {
    const entry = path[i]!.entry;
    if (entry.type === "branch_summary" && entry.fromHook !== true) addFileOpsFromDetails(entry.details, fileOps);
  }
  for (const message of [...history.messages, ...turnPrefix.messages]) extractFileOpsFromMessage(message, fileOps);

  const estimate = estimateContextTokens(path);
  // Another agent's summary gets back what it lost within the budget repair has.
  const restoreBudget = repairBudgetTokens(summaryMaxTokens("history", settings.reserveTokens));
  const firstKept = path[cut.firstKeptIndex]!.entry;
  return {
    preparation: {
      leafId: leaf.entry.id,
      firstKeptEntryId: firstKept.id,
      messagesToSummarize: history.messages,
      summarizeEntryIds: history.entryIds,
      turnPrefixMessages: turnPrefix.messages,
      turnPrefixEntryIds: turnPrefix.entryIds,
      isSplitTurn: cut.isSplitTurn,
      tokensBefore: estimate.measurable ? estimate.tokens : null,
      ...(previous ? { previousSummary: restoredSummary(path, previousIndex, restoreBudget) } : {}),
      fileOps: computeFileLists(fileOps),
      // The declared keys only: a caller's settings object may hold more (`compaction.prune`).
      settings: { enabled: settings.enabled, reserveTokens: settings.reserveTokens, keepRecentTokens: settings.keepRecentTokens },
      ...(prune && prune.hidden.length > 0 ? { prune: { hidden: [...prune.hidden], tokensSaved: prune.tokensSaved } } : {}),
    },
  };
}
