/**
 * From a preparation to the final summary text (docs/design.md#split-turns, #summary-format):
 * which model requests to make, and how their answers are put together. Pure, so the daemon's
 * summarizers, the extractive fallback and plugins assemble summaries the same way.
 */
import type { CompactionPreparation, FileOps } from "@base-context/protocol";
import { formatFileOps } from "../file-ops.js";
import { buildSummaryRequest, type SummaryRequest } from "./prompts.js";

export const NO_PRIOR_HISTORY = "No prior history.";
export const SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n";

/** One summary for a split turn: the history part, then the turn prefix's. */
export function mergeSplitTurn(historySummary: string, turnPrefixSummary: string): string {
  return `${historySummary || NO_PRIOR_HISTORY}${SPLIT_TURN_SEPARATOR}${withoutRepeatedItems(turnPrefixSummary, historySummary)}`;
}

const LIST_ITEM = /^\s*[-*]\s+(?:\[[ xX]\]\s+)?(.*)$/;

/**
 * The turn's list items the history summary already holds word for word are not said twice, nor
 * its request when the history's Goal already states it (a history without a request of its own
 * takes the turn's as its current task).
 */
function withoutRepeatedItems(turnPrefixSummary: string, historySummary: string): string {
  const said = new Set<string>();
  const goals = new Set<string>();
  for (const line of historySummary.split("\n")) {
    const item = LIST_ITEM.exec(line)?.[1]?.trim();
    if (item && item.length >= 12) said.add(item);
    const goal = GOAL_LINE.exec(line)?.[1]?.trim();
    if (goal) goals.add(goal);
  }
  if (said.size === 0 && goals.size === 0) return turnPrefixSummary;
  return turnPrefixSummary
    .split("\n")
    .filter((line) => !said.has(LIST_ITEM.exec(line)?.[1]?.trim() ?? ""))
    .map((line) => (goals.has(line.trim()) ? SAME_REQUEST : line))
    .join("\n");
}

const GOAL_LINE = /^Current task: (.+)$/;
const SAME_REQUEST = "(the current task of the Goal above)";

/** Summary text followed by the `<read-files>` / `<modified-files>` sections. */
export function appendFileOps(summary: string, fileOps: FileOps): string {
  return summary + formatFileOps(fileOps);
}

// The sections formatFileOps appends, when they end a text.
const TRAILING_FILE_SECTIONS = /(?:\n\n<(read-files|modified-files)>\n[\s\S]*?\n<\/\1>)+$/;

/** A summary without the file sections appended to it (they are appended afresh each time). */
export function stripFileOps(summary: string): string {
  return summary.replace(TRAILING_FILE_SECTIONS, "");
}

export interface CompactionSummaryPlan {
  /** Summary of `messagesToSummarize`; absent when there are none (split turn only). */
  history?: SummaryRequest;
  /** Summary of the turn prefix; present for split turns. */
  turnPrefix?: SummaryRequest;
  /**
   * The history text to use when `history` is absent: the previous summary carried over as is
   * (pi would write "No prior history." and lose it), else "No prior history.".
   */
  historyWithoutRequest: string;
}

export function planCompactionSummary(
  preparation: CompactionPreparation,
  customInstructions?: string,
): CompactionSummaryPlan {
  const { reserveTokens } = preparation.settings;
  const needsHistory = preparation.messagesToSummarize.length > 0;
  const needsPrefix = preparation.isSplitTurn && preparation.turnPrefixMessages.length > 0;
  return {
    ...(needsHistory || !needsPrefix
      ? {
          history: buildSummaryRequest({
            messages: preparation.messagesToSummarize,
            ...(preparation.previousSummary !== undefined ? { previousSummary: preparation.previousSummary } : {}),
            ...(customInstructions !== undefined ? { customInstructions } : {}),
            kind: "history",
            reserveTokens,
          }),
        }
      : {}),
    ...(needsPrefix
      ? {
          turnPrefix: buildSummaryRequest({
            messages: preparation.turnPrefixMessages,
            ...(customInstructions !== undefined ? { customInstructions } : {}),
            kind: "turnPrefix",
            reserveTokens,
          }),
        }
      : {}),
    historyWithoutRequest: preparation.previousSummary
      ? stripFileOps(preparation.previousSummary)
      : NO_PRIOR_HISTORY,
  };
}

export interface SummaryAnswers {
  /** The model's answer to `plan.history` (ignored when the plan had none). */
  history?: string;
  /** The model's answer to `plan.turnPrefix`. */
  turnPrefix?: string;
}

/** The compaction entry's `summary` and default `details`. */
export function assembleCompactionSummary(
  preparation: CompactionPreparation,
  plan: CompactionSummaryPlan,
  answers: SummaryAnswers,
): { summary: string; details: FileOps } {
  const history = plan.history ? (answers.history ?? "") : plan.historyWithoutRequest;
  const body = plan.turnPrefix ? mergeSplitTurn(history, answers.turnPrefix ?? "") : history;
  return {
    summary: appendFileOps(body, preparation.fileOps),
    details: { readFiles: [...preparation.fileOps.readFiles], modifiedFiles: [...preparation.fileOps.modifiedFiles] },
  };
}
