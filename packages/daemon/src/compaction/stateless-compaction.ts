/**
 * `summarize/compaction` (docs/summaries-as-a-service.md): a compaction summary of messages the
 * agent sends, through the stored compaction's pipeline without the store — plugin hook
 * (cancel | result | nothing) → summarizer chain → retention check and repair. Nothing is written.
 *
 * Nothing to summarize (a short session: everything fits in the part the agent keeps) is a normal
 * outcome, as in pi: without a plugin's summary, the previous summary is carried over (or "No prior
 * history." when there is none) with the file lists, and no model is asked about nothing.
 */
import type { CompactionPreparation, ContextMessage, SummarizeCompaction, SummarizeProgress, SummarizeResult, ValidParamsOf } from "@base-context/protocol";
import {
  assembleCompactionSummary,
  computeFileLists,
  createFileOps,
  extractFileOpsFromMessage,
  planCompactionSummary,
} from "@base-context/core";
import { CancelledError } from "../errors.js";
import { describeChain, type Summarizer } from "../summarizer/index.js";
import type { CompactHookContext, CompactHooks } from "../hooks/compact-hooks.js";
import { compactHookEvent } from "./hook-event.js";
import { retainCompactionSummary } from "./retention.js";
import { requestSettings } from "./settings.js";
import { summarizePreparation } from "./summarize.js";
import { summarizedResult, type StatelessDeps, type StatelessRequest } from "./stateless-deps.js";

export type SummarizeCompactionParams = ValidParamsOf<typeof SummarizeCompaction>;

/** What plugins see as `firstKeptEntryId` when the agent gave none. */
export const NO_FIRST_KEPT_ENTRY = "none";

/** `summarizer` of a summary no summarizer wrote (nothing new to summarize: the previous summary carried over). */
export const CARRIED_OVER = "none";

export async function summarizeCompactionStateless(
  deps: StatelessDeps & { readonly hooks?: CompactHooks | undefined },
  params: SummarizeCompactionParams,
  request: StatelessRequest,
): Promise<SummarizeResult> {
  const { signal } = request;
  const progress = (value: SummarizeProgress) => request.progress?.(value);
  const projectDir = params.projectDir ?? request.projectDir;
  const applied = requestSettings(deps.settingsFor(projectDir), {
    sources: deps.sourcesFor?.(projectDir),
    overrides: params.settings,
    contextWindow: params.contextWindow,
  });
  const { settings } = applied;
  const preparation = preparationOf(params, applied.compaction);
  progress({ kind: "begin", title: "Summarizing for compaction", cancellable: true });
  let outcome = "failed";
  try {
    let produced: { summary: string; details: unknown; summarizer: string; message: string; pluginId?: string; firstKeptEntryId?: string };
    const context: CompactHookContext = { sessionId: params.sessionId, projectDir, settings, clientModel: request.clientModel };
    const hook =
      deps.hooks && deps.hooks.hasCompactHook?.(context) !== false
        ? await runHook(deps.hooks, params, preparation, context, signal, progress)
        : undefined;
    if (hook && "cancel" in hook) {
      outcome = `cancelled by plugin ${hook.pluginId}`;
      return { status: "cancelled", pluginId: hook.pluginId, message: outcome };
    }
    if (hook && "compaction" in hook) {
      const { compaction, pluginId } = hook;
      produced = {
        summary: compaction.summary,
        details: compaction.details,
        summarizer: `plugin:${pluginId}`,
        message: `summary written by plugin ${pluginId}`,
        pluginId,
        firstKeptEntryId: compaction.firstKeptEntryId,
      };
    } else if (preparation.messagesToSummarize.length + preparation.turnPrefixMessages.length === 0) {
      produced = carriedOver(preparation);
    } else {
      const summarizer: Summarizer = deps.summarizerFor(settings.summarizer, request.clientModel);
      progress({
        kind: "report",
        message: `Summarizing ${describe(preparation)} with ${describeChain(summarizer, settings.summarizer.fallback)}`,
      });
      const summarized = await summarizePreparation(preparation, {
        summarizer,
        fallback: settings.summarizer.fallback,
        customInstructions: params.customInstructions,
        signal,
        sessionId: params.sessionId,
        budget: applied.summaryBudget,
      });
      const { fallbacks, fallback } = summarized.details;
      produced = {
        summary: summarized.summary,
        details: summarized.details,
        summarizer: summarized.details.summarizer,
        message:
          `summarized ${describe(preparation)} with ${summarized.details.summarizer}` +
          (fallback ? ` (fallback: ${(fallbacks ?? [fallback]).map((record) => record.error).join("; then ")})` : ""),
      };
    }
    throwIfAborted(signal);
    const retained = retainCompactionSummary(preparation, produced.summary, {
      repair: settings.summary.repair,
      maxBytes: settings.limits.maxSummaryBytes,
      budget: applied.summaryBudget,
    });
    outcome = applied.conflict !== undefined ? `${produced.message}; ${applied.conflict}` : produced.message;
    return {
      ...summarizedResult({ ...produced, message: outcome }, retained),
      ...(produced.firstKeptEntryId !== undefined && params.firstKeptEntryId !== undefined
        ? { firstKeptEntryId: produced.firstKeptEntryId }
        : {}),
    };
  } catch (error) {
    if (error instanceof CancelledError) outcome = "cancelled by the client";
    throw error;
  } finally {
    progress({ kind: "end", message: outcome });
  }
}

/** The summary of nothing new: the previous one as it was (its file lists written afresh), else pi's "No prior history.". */
function carriedOver(preparation: CompactionPreparation): { summary: string; details: unknown; summarizer: string; message: string } {
  const { historyWithoutRequest } = planCompactionSummary(preparation);
  const assembled = assembleCompactionSummary(preparation, { historyWithoutRequest }, {});
  return {
    summary: assembled.summary,
    details: { ...assembled.details, summarizer: CARRIED_OVER },
    summarizer: CARRIED_OVER,
    message:
      preparation.previousSummary !== undefined
        ? "nothing new to summarize: the previous summary is carried over"
        : "nothing to summarize yet: everything fits in the kept part",
  };
}

/** The preparation a stored compaction would have made, from what the agent sent. */
function preparationOf(params: SummarizeCompactionParams, settings: CompactionPreparation["settings"]): CompactionPreparation {
  return {
    leafId: params.firstKeptEntryId ?? NO_FIRST_KEPT_ENTRY,
    firstKeptEntryId: params.firstKeptEntryId ?? NO_FIRST_KEPT_ENTRY,
    messagesToSummarize: params.messagesToSummarize,
    summarizeEntryIds: [],
    turnPrefixMessages: params.turnPrefixMessages,
    turnPrefixEntryIds: [],
    isSplitTurn: params.turnPrefixMessages.length > 0,
    tokensBefore: params.tokensBefore ?? null,
    ...(params.previousSummary !== undefined ? { previousSummary: params.previousSummary } : {}),
    fileOps: params.fileOps ?? fileOpsOf([...params.messagesToSummarize, ...params.turnPrefixMessages]),
    settings,
  };
}

function fileOpsOf(messages: readonly ContextMessage[]): CompactionPreparation["fileOps"] {
  const fileOps = createFileOps();
  for (const message of messages) extractFileOpsFromMessage(message, fileOps);
  return computeFileLists(fileOps);
}

async function runHook(
  hooks: CompactHooks,
  params: SummarizeCompactionParams,
  preparation: CompactionPreparation,
  context: CompactHookContext,
  signal: AbortSignal | undefined,
  progress: (value: SummarizeProgress) => void,
) {
  progress({ kind: "report", message: "Asking plugins" });
  const event = compactHookEvent(preparation, params.branchEntries ?? [], params.customInstructions, context.settings);
  const outcome = await hooks.runCompactHook(event, signal ?? new AbortController().signal, context);
  throwIfAborted(signal);
  return outcome;
}

function describe(preparation: CompactionPreparation): string {
  const count = preparation.messagesToSummarize.length;
  const messages = `${count} message${count === 1 ? "" : "s"}`;
  return preparation.isSplitTurn ? `${messages} and ${preparation.turnPrefixMessages.length} of a split turn` : messages;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof CancelledError ? signal.reason : new CancelledError();
}
