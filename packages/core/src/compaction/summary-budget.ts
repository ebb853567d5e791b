/**
 * The summary budget of a model's window (docs/compaction-rungs.md#settings-that-fit-the-window).
 *
 * Without a window each part of a summary is asked for in its own budget (the history in 0.8 ×
 * reserve, a split turn's prefix in 0.5 × reserve) and the file lists and repair lines come on top:
 * with the 200k defaults there is room to spare. With a window the whole stored summary (both
 * parts, the file lists, the repair lines) fits 0.8 × reserve, so that summary and kept part leave
 * the turns after a compaction the room the window's shares promise: the parts are asked for in
 * what the file lists and repair leave, and what still goes over is cut at the budget.
 */
import type { CompactionPreparation } from "@base-context/protocol";
import { formatFileOps } from "../file-ops.js";
import { summaryMaxTokens } from "./prompts.js";
import { SPLIT_TURN_SEPARATOR, type CompactionSummaryPlan } from "./summary.js";

/** The usual rough estimate, as the extractive summarizer and repair size their text. */
const CHARS_PER_TOKEN = 4;
/** Repair lines may take this share of the budget. */
const REPAIR_SHARE = 1 / 8;
/** The least a part is asked for, however long the file lists: a part of a few lines still says what it is about. */
const MIN_PART_TOKENS = 100;

export interface SummaryBudget {
  /** Tokens the stored summary may take (0.8 × reserve). */
  readonly tokens: number;
  /** Tokens repair may add. */
  readonly repairTokens: number;
  /** The stored summary's cap: four characters a token, a UTF-8 byte at least each. */
  readonly maxBytes: number;
  /** How the note of a summary cut at the budget names it. */
  readonly limitName: string;
}

export function windowSummaryBudget(contextWindow: number, reserveTokens: number): SummaryBudget {
  const tokens = summaryMaxTokens("history", reserveTokens);
  return {
    tokens,
    repairTokens: Math.floor(tokens * REPAIR_SHARE),
    maxBytes: tokens * CHARS_PER_TOKEN,
    limitName: `the summary budget of a ${contextWindow}-token window (0.8 × compaction.reserveTokens)`,
  };
}

/**
 * The plan with its parts asked for in what the budget leaves once the file lists, the split
 * turn's separator, the carried history (when only a turn prefix is asked for) and repair are
 * counted, shared between history and turn prefix as their own budgets are (0.8 : 0.5).
 */
export function planWithinBudget(
  plan: CompactionSummaryPlan,
  preparation: Pick<CompactionPreparation, "fileOps" | "settings">,
  budget: SummaryBudget,
): CompactionSummaryPlan {
  let fixedChars = formatFileOps(preparation.fileOps).length;
  if (plan.turnPrefix) fixedChars += SPLIT_TURN_SEPARATOR.length;
  if (!plan.history) fixedChars += plan.historyWithoutRequest.length;
  const text = Math.max(0, budget.tokens - budget.repairTokens - Math.ceil(fixedChars / CHARS_PER_TOKEN));
  const { reserveTokens } = preparation.settings;
  const historyShare = summaryMaxTokens("history", reserveTokens);
  const prefixShare = summaryMaxTokens("turnPrefix", reserveTokens);
  const both = plan.history !== undefined && plan.turnPrefix !== undefined;
  const within = (request: NonNullable<CompactionSummaryPlan["history"]>, share: number) => {
    const part = Math.floor(both ? (text * share) / (historyShare + prefixShare) : text);
    return { ...request, maxTokens: Math.min(request.maxTokens, Math.max(MIN_PART_TOKENS, part)) };
  };
  return {
    ...plan,
    ...(plan.history ? { history: within(plan.history, historyShare) } : {}),
    ...(plan.turnPrefix ? { turnPrefix: within(plan.turnPrefix, prefixShare) } : {}),
  };
}
