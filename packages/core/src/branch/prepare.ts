/**
 * The messages a branch summary is written from (docs/design.md#tree-navigation): filled newest first within a
 * token budget, so a long abandoned branch keeps its most recent work.
 */
import type { ContextMessage, FileOps, SessionEntry } from "@base-context/protocol";
import { compactionSummaryMessage, entryToContextMessage } from "../entry-messages.js";
import { addFileOpsFromDetails, computeFileLists, createFileOps, extractFileOpsFromMessage } from "../file-ops.js";
import type { CountedEntry } from "../types.js";

export interface BranchPreparation {
  /** Messages to summarize, oldest first. */
  messages: ContextMessage[];
  /** Ids of the entries behind `messages`, same order. */
  entryIds: string[];
  /** Cumulative file lists of the whole branch. */
  fileOps: FileOps;
  /** Sum of the stored counts of `messages`. */
  totalTokens: number;
}

/** A summary may be squeezed in past the budget while the messages so far fill less than this. */
export const SUMMARY_SQUEEZE_RATIO = 0.9;

/**
 * The message an entry contributes to a branch summary. Tool results are left out (the
 * assistant's tool call says what was done); compactions are read as their summaries.
 */
function branchMessage(entry: SessionEntry): ContextMessage | undefined {
  if (entry.type === "compaction") return compactionSummaryMessage(entry);
  if (entry.type === "message" && entry.message.role === "toolResult") return undefined;
  return entryToContextMessage(entry);
}

function isSummaryEntry(entry: SessionEntry): boolean {
  return entry.type === "compaction" || entry.type === "branch_summary";
}

/**
 * @param entries the branch's entries, oldest first, with stored counts
 * @param tokenBudget the most tokens of messages to take; 0 means no limit
 *
 * Walking from the newest entry, messages are taken while they fit. The first one that does not
 * fit ends the walk, except that a summary (compaction or branch summary), which condenses
 * everything older, is still taken when the messages so far fill less than 90 % of the budget.
 * File lists cover the whole branch, not just what fits: a file touched early is still touched.
 * Lists in the details of earlier daemon-made branch summaries are carried over; plugin-made ones
 * (`fromHook`) are not.
 */
export function prepareBranchEntries(entries: readonly CountedEntry[], tokenBudget = 0): BranchPreparation {
  const fileOps = createFileOps();
  for (const { entry } of entries) {
    if (entry.type === "branch_summary" && entry.fromHook !== true) addFileOpsFromDetails(entry.details, fileOps);
    const message = branchMessage(entry);
    if (message) extractFileOpsFromMessage(message, fileOps);
  }

  const messages: ContextMessage[] = [];
  const entryIds: string[] = [];
  let totalTokens = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const { entry, tokens } = entries[i]!;
    const message = branchMessage(entry);
    if (!message) continue;
    if (tokenBudget > 0 && totalTokens + tokens > tokenBudget) {
      if (isSummaryEntry(entry) && totalTokens < tokenBudget * SUMMARY_SQUEEZE_RATIO) {
        messages.unshift(message);
        entryIds.unshift(entry.id);
        totalTokens += tokens;
      }
      break;
    }
    messages.unshift(message);
    entryIds.unshift(entry.id);
    totalTokens += tokens;
  }

  return { messages, entryIds, fileOps: computeFileLists(fileOps), totalTokens };
}
