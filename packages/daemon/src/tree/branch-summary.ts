/**
 * Writing the summary of the branch being left (docs/design.md#tree-navigation):
 * prepare within the token budget, ask the summarizer with the branch prompt, assemble the
 * preamble, the model's text and the cumulative file lists.
 */
import type { FileOps, RetentionReport } from "@base-context/protocol";
import {
  assembleBranchSummary,
  buildBranchSummaryRequest,
  BRANCH_SUMMARY_MAX_TOKENS,
  carriedProbes,
  emptyProbes,
  formatFileOps,
  mergeProbes,
  probeMessages,
  repairBudgetTokens,
  retainSummary,
  NO_BRANCH_CONTENT,
  prepareBranchEntries,
  WINDOW_SHARES,
  type CountedEntry,
} from "@base-context/core";
import {
  summarizerDetails,
  summarizeWithFallback,
  type Summarizer,
  type SummarizerDetails,
  type SummaryRequest,
} from "../summarizer/index.js";

/** The window assumed when neither the request nor the session says which model the agent uses. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** `details.summarizer` of a summary no summarizer wrote (the branch held nothing to summarize). */
export const NO_SUMMARIZER = "none";

/**
 * `contextWindow − reserveTokens`, the reserve capped at a quarter of the window when the user did
 * not set it (`reserveSet`; docs/compaction-rungs.md#settings-that-fit-the-window): a small model's
 * window then still gives the summary three quarters of it to read. A window smaller than a reserve
 * the user set leaves 0, which `prepareBranchEntries` reads as "no limit", as pi does: the
 * summarizing model has its own window, and refusing to summarize anything would be worse.
 */
export function branchTokenBudget(contextWindow: number, reserveTokens: number, reserveSet = true): number {
  const reserve = reserveSet ? reserveTokens : Math.min(reserveTokens, Math.floor(contextWindow * WINDOW_SHARES.reserveTokens));
  return Math.max(0, contextWindow - reserve);
}

/** Whether `branchSummary.reserveTokens` comes from a settings file (without sources: taken as set). */
export function branchReserveSet(sources: Readonly<Record<string, string>> | undefined): boolean {
  return sources === undefined || (sources["branchSummary.reserveTokens"] ?? "default") !== "default";
}

export interface BranchSummaryInput {
  /** The entries being left, oldest first, with stored counts. */
  entries: readonly CountedEntry[];
  tokenBudget: number;
  customInstructions?: string | undefined;
  replaceInstructions?: boolean | undefined;
  summarizer: Summarizer;
  /** `summarizer.fallback`: the extractive summarizer takes over when the model fails. */
  fallback: boolean;
  signal?: AbortSignal | undefined;
  /** Sent along to a client's model. */
  sessionId?: string | undefined;
  /** Called once the model is about to be asked (for progress reports). */
  onSummarizing?: ((messageCount: number) => void) | undefined;
}

/** `details` of a daemon-made branch summary (`summarizer` is `"none"` when no summarizer was asked). */
export interface BranchSummaryDetails extends FileOps, SummarizerDetails {}

export interface WrittenBranchSummary {
  summary: string;
  details: BranchSummaryDetails;
  /** Ids of the entries the summary was written from (what fit in the budget). */
  summarizedEntryIds: string[];
}

/**
 * Rejects with CancelledError when `signal` aborts, and with RequestFailedError when the model
 * fails and fallback is off.
 */
export async function summarizeBranch(input: BranchSummaryInput): Promise<WrittenBranchSummary> {
  const preparation = prepareBranchEntries(input.entries, input.tokenBudget);
  if (preparation.messages.length === 0) {
    // pi's answer, without a model call. File lists still go on: a range may hold only tool
    // results, and cumulative tracking must not lose the files they touched.
    return {
      summary: NO_BRANCH_CONTENT + formatFileOps(preparation.fileOps),
      details: { ...preparation.fileOps, summarizer: NO_SUMMARIZER },
      summarizedEntryIds: [],
    };
  }

  const prompt = buildBranchSummaryRequest({
    messages: preparation.messages,
    ...(input.customInstructions !== undefined ? { customInstructions: input.customInstructions } : {}),
    ...(input.replaceInstructions !== undefined ? { replaceInstructions: input.replaceInstructions } : {}),
  });
  const request: SummaryRequest = {
    kind: "branch",
    messages: preparation.messages,
    ...(input.customInstructions !== undefined ? { customInstructions: input.customInstructions } : {}),
    ...(input.replaceInstructions !== undefined ? { replaceInstructions: input.replaceInstructions } : {}),
    ...prompt,
    ...(input.sessionId !== undefined ? { sessionId: input.sessionId } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  };
  input.onSummarizing?.(preparation.messages.length);
  const outcome = await summarizeWithFallback(input.summarizer, request, { fallback: input.fallback });
  const assembled = assembleBranchSummary(outcome.text, preparation.fileOps);
  return {
    summary: assembled.summary,
    details: { ...assembled.details, ...summarizerDetails([outcome]) },
    summarizedEntryIds: preparation.entryIds,
  };
}

/**
 * Checks a branch summary (whoever wrote it) against the branch it replaces, and repairs it when
 * asked (docs/retention.md). The probes are read from the messages a branch summary is written
 * from (tool results are not among them), the branch's file lists and the summaries inside it.
 */
export function retainBranchSummary(
  entries: readonly CountedEntry[],
  tokenBudget: number,
  summary: string,
  repair: boolean,
  maxBytes: number,
): { summary: string; retention: RetentionReport } {
  const preparation = prepareBranchEntries(entries, tokenBudget);
  const listed = emptyProbes();
  for (const file of preparation.fileOps.modifiedFiles) listed.files.push({ text: file, index: -1, detail: "modified" });
  for (const file of preparation.fileOps.readFiles) listed.files.push({ text: file, index: -1, detail: "read" });
  const carried = preparation.messages
    .filter((message) => message.role === "compactionSummary" || message.role === "branchSummary")
    .map((message) => carriedProbes(message.summary));
  const probes = mergeProbes(...carried, listed, probeMessages(preparation.messages));
  return retainSummary(summary, probes, { repair, budgetTokens: repairBudgetTokens(BRANCH_SUMMARY_MAX_TOKENS), maxBytes });
}
