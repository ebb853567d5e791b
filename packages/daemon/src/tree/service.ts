/**
 * `tree/navigate` (docs/design.md#tree-navigation): collect the branch being left, let plugins cancel or replace
 * the summary, summarize, commit. Shaped like the compaction pipeline (docs/design.md#the-compaction-pipeline):
 *
 *   lock session → read paths → plan (pure) → session_before_tree → summarize → commit (stale-checked)
 *
 * Cancelling (`signal`) at any point before the commit writes nothing.
 */
import type { TreeDidNavigate, TreeHookEvent, TreeNavigate, TreeNavigateProgress, ValidParamsOf } from "@base-context/protocol";
import type { z } from "zod";
import { CancelledError, entryNotFound } from "../errors.js";
import { defaultIds, type IdSource } from "../ids.js";
import { log } from "../log.js";
import type { SessionService } from "../sessions/index.js";
import type { SessionSettings } from "../settings/session-settings.js";
import type { SessionLocks } from "../sessions/session-locks.js";
import { createSummarizer, describeChain, type ClientModel, type Summarizer, type SummarizerSettings } from "../summarizer/index.js";
import { detailsWithRetention } from "@base-context/core";
import { branchReserveSet, branchTokenBudget, DEFAULT_CONTEXT_WINDOW, retainBranchSummary, summarizeBranch } from "./branch-summary.js";
import { NavigationCommitter, type SummaryToWrite } from "./commit.js";
import type { TreeHookContext, TreeHookOutcome, TreeHooks } from "../hooks/tree-hooks.js";
import { planNavigation, type NavigationPlan } from "./plan.js";
import { findNavigation, NAVIGATE_METHOD, type NavigateResult } from "./replay.js";

export type NavigateParams = ValidParamsOf<typeof TreeNavigate>;
export type DidNavigateEvent = z.input<(typeof TreeDidNavigate)["params"]>;

export interface NavigateOptions {
  /** Aborts the navigation: CancelledError, nothing written. */
  signal?: AbortSignal;
  /** The asking client's model, when it offers one: `auto` writes the branch summary with it. */
  clientModel?: ClientModel | undefined;
  progress?: (value: TreeNavigateProgress) => void;
  /** Called once the session's leaf has moved (not for no-ops, cancels, stale results or retries). */
  onNavigated?: (event: DidNavigateEvent) => void;
}

export interface TreeServiceDeps {
  sessions: SessionService;
  /** Settings of a session's project: `branchSummary.reserveTokens`, `summarizer.*`. */
  settings: SessionSettings;
  /** Shared with compaction: one long operation per session at a time (a second one gets session_busy). */
  locks: Pick<SessionLocks, "acquire">;
  /** Where the summarizer's API key variable is read. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  ids?: Pick<IdSource, "entryId">;
  /** Builds the summarizer for a session's settings; default `createSummarizer` (tests inject one). */
  summarizerFor?: (settings: SummarizerSettings, env: NodeJS.ProcessEnv, clientModel: ClientModel | undefined) => Summarizer;
}

/** The name other long operations see while a navigation holds the session. */
export const TREE_OPERATION = "tree navigation";

export class TreeService {
  private readonly sessions: SessionService;
  private readonly committer: NavigationCommitter;

  constructor(
    private readonly deps: TreeServiceDeps,
    private readonly hooks?: TreeHooks,
  ) {
    this.sessions = deps.sessions;
    this.committer = new NavigationCommitter(deps.sessions, deps.ids ?? defaultIds);
  }

  /**
   * Throws AppError session_not_found / entry_not_found, CancelledError on abort, and
   * RequestFailedError when the model fails with fallback off. Everything else is a result.
   */
  async navigate(params: NavigateParams, options: NavigateOptions = {}): Promise<NavigateResult> {
    const records = this.sessions.records;
    records.requireSession(params.sessionId);
    const replay = params.requestId === undefined ? undefined : findNavigation(records, params.sessionId, params.requestId);
    if (replay) return replay;
    const signal = options.signal ?? new AbortController().signal;
    const release = this.deps.locks.acquire(params.sessionId, TREE_OPERATION);
    try {
      return await this.navigateLocked(params, signal, options);
    } finally {
      release();
    }
  }

  private async navigateLocked(params: NavigateParams, signal: AbortSignal, options: NavigateOptions): Promise<NavigateResult> {
    const { sessionId, targetId } = params;
    const records = this.sessions.records;
    const oldLeafId = records.requireSession(sessionId).leafId;
    if (!records.hasEntry(sessionId, targetId)) throw entryNotFound(sessionId, targetId);
    if (targetId === oldLeafId) return this.finish(params, { status: "unchanged", leafId: oldLeafId });

    const progress = options.progress ?? (() => undefined);
    progress({ kind: "begin", title: "Navigating the session tree" });
    let status = "failed";
    try {
      const oldPath = await this.sessions.getCountedPath(sessionId, oldLeafId);
      const targetPath = records.path(sessionId, targetId).map((stored) => stored.entry);
      const plan = planNavigation(oldPath, targetPath);

      const hook = await this.runHook(params, oldLeafId, plan, signal, progress, options.clientModel);
      if (hook && "cancel" in hook) {
        const result: NavigateResult = {
          status: "cancelled",
          leafId: oldLeafId,
          pluginId: hook.pluginId,
          message: `cancelled by plugin ${hook.pluginId}`,
        };
        status = result.status;
        return this.finish(params, result);
      }
      const hookSummary = hook && "summary" in hook ? hook : undefined;

      let summary: SummaryToWrite | undefined;
      // Nothing is summarized from an empty path: the old leaf was "before the root".
      if (params.summarize && oldLeafId !== null) {
        if (hookSummary) {
          summary = { summary: hookSummary.summary.summary, fromHook: true };
          if (hookSummary.summary.details !== undefined) summary.details = hookSummary.summary.details;
        } else if (plan.entriesToSummarize.length > 0) {
          summary = await this.summarize(params, plan, signal, progress, options.clientModel);
        }
        if (summary) summary = this.retain(params, plan, summary);
      }
      if (signal.aborted) throw new CancelledError();

      const result = await this.committer.commit({
        sessionId,
        oldLeafId,
        targetId,
        newLeafId: plan.newLeafId,
        editorText: plan.editorText,
        summary,
        label: params.label,
        requestId: params.requestId,
        pluginId: summary?.fromHook ? hookSummary?.pluginId : undefined,
      });
      status = result.status;
      if (result.status === "moved") {
        const event: DidNavigateEvent = { sessionId, oldLeafId, leafId: result.leafId, targetId };
        if (result.summaryEntry) event.summaryEntryId = result.summaryEntry.id;
        options.onNavigated?.(event);
      }
      return result;
    } catch (error) {
      if (error instanceof CancelledError) status = "cancelled by the client";
      throw error;
    } finally {
      progress({ kind: "end", message: status });
    }
  }

  /** Stores a result that wrote nothing, so a retry with the same requestId gets it back. */
  private finish(params: NavigateParams, result: NavigateResult): NavigateResult {
    if (params.requestId !== undefined) {
      this.sessions.records.saveRequestResult(params.sessionId, params.requestId, NAVIGATE_METHOD, { navigate: result });
    }
    return result;
  }

  private async runHook(
    params: NavigateParams,
    oldLeafId: string | null,
    plan: NavigationPlan,
    signal: AbortSignal,
    progress: (value: TreeNavigateProgress) => void,
    clientModel: ClientModel | undefined,
  ): Promise<TreeHookOutcome> {
    if (!this.hooks) return undefined;
    const event: TreeHookEvent = {
      preparation: {
        targetId: params.targetId,
        oldLeafId,
        commonAncestorId: plan.commonAncestorId,
        entriesToSummarize: plan.entriesToSummarize.map((counted) => counted.entry),
        userWantsSummary: params.summarize,
        ...(params.customInstructions !== undefined ? { customInstructions: params.customInstructions } : {}),
        ...(params.replaceInstructions !== undefined ? { replaceInstructions: params.replaceInstructions } : {}),
        ...(params.label !== undefined ? { label: params.label } : {}),
      },
    };
    progress({ kind: "report", message: "Running session_before_tree plugins" });
    try {
      const context: TreeHookContext = {
        sessionId: params.sessionId,
        projectDir: this.sessions.records.requireSession(params.sessionId).cwd,
        settings: this.deps.settings.forSession(params.sessionId),
        clientModel,
      };
      return await this.hooks.runTreeHook(event, signal, context);
    } catch (error) {
      if (error instanceof CancelledError || signal.aborted) throw error instanceof CancelledError ? error : new CancelledError();
      // The host reports plugin failures itself; anything reaching here is the host's own failure,
      // and a broken plugin host must not make the tree unusable.
      log("warn", `session_before_tree failed: ${error instanceof Error ? error.message : String(error)}; navigating without plugins`);
      return undefined;
    }
  }

  /** Checks the summary against the branch, repairs it when `summary.repair` is on, records the report. */
  private retain(params: NavigateParams, plan: NavigationPlan, summary: SummaryToWrite): SummaryToWrite {
    const settings = this.deps.settings.forSession(params.sessionId);
    // Capped with repair, so the report describes the stored text.
    const retained = retainBranchSummary(
      plan.entriesToSummarize,
      this.tokenBudget(params),
      summary.summary,
      settings.summary.repair,
      settings.limits.maxSummaryBytes,
    );
    const stored = retained.summary;
    return {
      ...summary,
      summary: stored,
      retention: retained.retention,
      details: detailsWithRetention(summary.details, retained.retention),
    };
  }

  private tokenBudget(params: NavigateParams): number {
    const settings = this.deps.settings.forSession(params.sessionId);
    const reserveSet = branchReserveSet(this.deps.settings.sourcesFor?.(params.sessionId));
    return branchTokenBudget(params.contextWindow ?? DEFAULT_CONTEXT_WINDOW, settings.branchSummary.reserveTokens, reserveSet);
  }

  private async summarize(
    params: NavigateParams,
    plan: NavigationPlan,
    signal: AbortSignal,
    progress: (value: TreeNavigateProgress) => void,
    clientModel: ClientModel | undefined,
  ): Promise<SummaryToWrite> {
    const settings = this.deps.settings.forSession(params.sessionId);
    const env = this.deps.env ?? process.env;
    const summarizer = this.deps.summarizerFor
      ? this.deps.summarizerFor(settings.summarizer, env, clientModel)
      : createSummarizer(settings.summarizer, env, { clientModel });
    const written = await summarizeBranch({
      entries: plan.entriesToSummarize,
      tokenBudget: this.tokenBudget(params),
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
    // Capped with retention (retain): a body near the cap is cut to leave room for repair.
    return { summary: written.summary, details: written.details };
  }
}
