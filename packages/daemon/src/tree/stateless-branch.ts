/**
 * `summarize/branch` (docs/summaries-as-a-service.md): the summary of a branch the agent is
 * leaving, through tree navigation's pipeline without the store — `session_before_tree` (cancel |
 * summary | nothing) → branch summarizer → retention check and repair. Nothing is written.
 */
import type { SummarizeBranch, SummarizeProgress, SummarizeResult, TreeHookEvent, ValidParamsOf } from "@base-context/protocol";
import { summarizedResult, type StatelessDeps, type StatelessRequest } from "../compaction/stateless-deps.js";
import type { CountedEntry } from "@base-context/core";
import { CancelledError } from "../errors.js";
import { log } from "../log.js";
import { describeChain } from "../summarizer/index.js";
import { branchReserveSet, branchTokenBudget, DEFAULT_CONTEXT_WINDOW, retainBranchSummary, summarizeBranch } from "./branch-summary.js";
import type { TreeHookContext, TreeHookOutcome, TreeHooks } from "../hooks/tree-hooks.js";

export type SummarizeBranchParams = ValidParamsOf<typeof SummarizeBranch>;

export interface StatelessBranchDeps extends StatelessDeps {
  readonly hooks?: TreeHooks | undefined;
  /** The daemon's token count of an entry (the budget is in these tokens). */
  countEntry(entry: CountedEntry["entry"]): Promise<number>;
}

export async function summarizeBranchStateless(
  deps: StatelessBranchDeps,
  params: SummarizeBranchParams,
  request: StatelessRequest,
): Promise<SummarizeResult> {
  const signal = request.signal ?? new AbortController().signal;
  const progress = (value: SummarizeProgress) => request.progress?.(value);
  const projectDir = params.projectDir ?? request.projectDir;
  const settings = deps.settingsFor(projectDir);
  const reserveSet = branchReserveSet(deps.sourcesFor?.(projectDir));
  const tokenBudget = branchTokenBudget(params.contextWindow ?? DEFAULT_CONTEXT_WINDOW, settings.branchSummary.reserveTokens, reserveSet);
  progress({ kind: "begin", title: "Summarizing a branch", cancellable: true });
  let outcome = "failed";
  try {
    const entries: CountedEntry[] = await Promise.all(
      params.entries.map(async (entry) => ({ entry, tokens: await deps.countEntry(entry) })),
    );
    throwIfAborted(signal);
    const context: TreeHookContext = { sessionId: params.sessionId, projectDir, settings, clientModel: request.clientModel };
    const hook = deps.hooks ? await runHook(deps.hooks, params, context, signal, progress) : undefined;
    if (hook && "cancel" in hook) {
      outcome = `cancelled by plugin ${hook.pluginId}`;
      return { status: "cancelled", pluginId: hook.pluginId, message: outcome };
    }
    let produced: { summary: string; details: unknown; summarizer: string; message: string; pluginId?: string };
    if (hook) {
      produced = {
        summary: hook.summary.summary,
        details: hook.summary.details,
        summarizer: `plugin:${hook.pluginId}`,
        message: `summary written by plugin ${hook.pluginId}`,
        pluginId: hook.pluginId,
      };
    } else {
      const summarizer = deps.summarizerFor(settings.summarizer, request.clientModel);
      const written = await summarizeBranch({
        entries,
        tokenBudget,
        customInstructions: params.customInstructions,
        replaceInstructions: params.replaceInstructions,
        summarizer,
        fallback: settings.summarizer.fallback,
        signal,
        sessionId: params.sessionId,
        onSummarizing: (count) =>
          progress({
            kind: "report",
            message: `Summarizing ${count} messages with ${describeChain(summarizer, settings.summarizer.fallback)}`,
          }),
      });
      produced = {
        summary: written.summary,
        details: written.details,
        summarizer: written.details.summarizer,
        message: `summarized the branch with ${written.details.summarizer}`,
      };
    }
    throwIfAborted(signal);
    const retained = retainBranchSummary(entries, tokenBudget, produced.summary, settings.summary.repair, settings.limits.maxSummaryBytes);
    outcome = produced.message;
    return summarizedResult(produced, retained);
  } catch (error) {
    if (error instanceof CancelledError) outcome = "cancelled by the client";
    throw error;
  } finally {
    progress({ kind: "end", message: outcome });
  }
}

async function runHook(
  hooks: TreeHooks,
  params: SummarizeBranchParams,
  context: TreeHookContext,
  signal: AbortSignal,
  progress: (value: SummarizeProgress) => void,
): Promise<TreeHookOutcome> {
  const event: TreeHookEvent = {
    preparation: {
      targetId: params.targetId ?? "",
      oldLeafId: params.oldLeafId ?? params.entries.at(-1)?.id ?? null,
      commonAncestorId: params.commonAncestorId ?? null,
      entriesToSummarize: params.entries,
      userWantsSummary: true,
      ...(params.customInstructions !== undefined ? { customInstructions: params.customInstructions } : {}),
      ...(params.replaceInstructions !== undefined ? { replaceInstructions: params.replaceInstructions } : {}),
      ...(params.label !== undefined ? { label: params.label } : {}),
    },
  };
  progress({ kind: "report", message: "Running session_before_tree plugins" });
  try {
    const outcome = await hooks.runTreeHook(event, signal, context);
    throwIfAborted(signal);
    return outcome;
  } catch (error) {
    if (error instanceof CancelledError || signal.aborted) throw error instanceof CancelledError ? error : new CancelledError();
    // As in tree navigation: a broken plugin host must not make summaries unavailable.
    log("warn", `session_before_tree failed: ${error instanceof Error ? error.message : String(error)}; summarizing without plugins`);
    return undefined;
  }
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof CancelledError ? signal.reason : new CancelledError();
}
