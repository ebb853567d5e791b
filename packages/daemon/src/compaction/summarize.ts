/**
 * The default summary of a preparation (docs/design.md#split-turns, #summary-format, #summarizers):
 * the core plans the requests, the summarizer answers them (history and turn prefix in
 * parallel, each falling back to the extractive summarizer on a model failure when allowed),
 * and the core assembles the final text with the file lists.
 */
import type { CompactionPreparation, ContextMessage, FileOps } from "@base-context/protocol";
import {
  assembleCompactionSummary,
  planCompactionSummary,
  planWithinBudget,
  type SummaryBudget,
  type SummaryRequest as PlannedRequest,
} from "@base-context/core";
import { CancelledError } from "../errors.js";
import {
  summarizerDetails,
  summarizeWithFallback,
  type Summarizer,
  type SummarizerDetails,
  type SummaryKind,
  type SummaryOutcome,
} from "../summarizer/index.js";

/** The compaction entry's default `details` (`summarizer`: both ids joined by "+" when a split turn's parts differ). */
export interface CompactionDetails extends FileOps, SummarizerDetails {}

export interface CompactionSummary {
  summary: string;
  details: CompactionDetails;
}

export interface SummarizeOptions {
  readonly summarizer: Summarizer;
  /** `summarizer.fallback`. */
  readonly fallback: boolean;
  readonly customInstructions?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Sent along to a client's model. */
  readonly sessionId?: string | undefined;
  /** With a window: the parts are asked for in what the whole summary may take. */
  readonly budget?: SummaryBudget | undefined;
}

export async function summarizePreparation(preparation: CompactionPreparation, options: SummarizeOptions): Promise<CompactionSummary> {
  const planned = planCompactionSummary(preparation, options.customInstructions);
  const plan = options.budget ? planWithinBudget(planned, preparation, options.budget) : planned;
  // When one part fails for good, the other is stopped instead of finishing for nothing.
  const sibling = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, sibling.signal]) : sibling.signal;
  const summarize = (kind: SummaryKind, planned: PlannedRequest, messages: readonly ContextMessage[], previousSummary?: string) =>
    summarizeWithFallback(
      options.summarizer,
      {
        kind,
        messages,
        ...(previousSummary !== undefined ? { previousSummary } : {}),
        ...(kind === "history" && plan.turnPrefix ? { followingTurn: preparation.turnPrefixMessages } : {}),
        ...(options.customInstructions !== undefined ? { customInstructions: options.customInstructions } : {}),
        system: planned.system,
        prompt: planned.prompt,
        maxTokens: planned.maxTokens,
        ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
        signal,
      },
      { fallback: options.fallback },
    ).catch((error: unknown) => {
      sibling.abort(new CancelledError());
      throw error;
    });

  const [history, turnPrefix] = await Promise.all([
    plan.history ? summarize("history", plan.history, preparation.messagesToSummarize, preparation.previousSummary) : undefined,
    plan.turnPrefix ? summarize("turnPrefix", plan.turnPrefix, preparation.turnPrefixMessages) : undefined,
  ]);
  // A sibling stopped by the other's failure rejects with CancelledError; the real error wins.
  if (options.signal?.aborted) throw new CancelledError();

  const assembled = assembleCompactionSummary(preparation, plan, {
    ...(history ? { history: history.text } : {}),
    ...(turnPrefix ? { turnPrefix: turnPrefix.text } : {}),
  });
  const outcomes = [history, turnPrefix].filter((outcome): outcome is SummaryOutcome => outcome !== undefined);
  return { summary: assembled.summary, details: { ...assembled.details, ...summarizerDetails(outcomes) } };
}
