/**
 * One compaction run, once the session's lock is held (docs/design.md#the-compaction-pipeline):
 * read the path → prepare (core) → nothing? → plugin hook (cancel | result | nothing)
 * → summarize → commit in one transaction with the job row → notify, reply.
 */
import {
  CompactionRun,
  type CompactionPreparation,
  type CompactionResult,
  type CompactionStats,
  type HookFailure,
  type EntryInput,
  type RetentionReport,
  type Settings,
  type ValidParamsOf,
} from "@base-context/protocol";
import {
  detailsWithRetention,
  chooseRung,
  estimateContextTokens,
  planPrune,
  prepareCompaction,
  pruneEntryInput,
  withPrunedCounts,
  withPlan,
  prunedOutputs,
  planFrom,
  EMPTY_PRUNE_PLAN,
  fitPlan,
  isContextVisible,
  stubTokenCount,
  compactionSummaryText,
  type PrunePlan,
  type SummaryBudget,
  truncationLimits,
} from "@base-context/core";
import { CancelledError } from "../errors.js";
import type { SessionSettings } from "../settings/session-settings.js";
import type { AppendOutcome, CountedEntry, SessionRecords, SessionService } from "../sessions/index.js";
import { describeChain, summarizerChain, type ClientModel, type Summarizer } from "../summarizer/index.js";
import { compactHookEvent } from "./hook-event.js";
import type { CompactHooks } from "../hooks/compact-hooks.js";
import type { RunReporter } from "./reporter.js";
import { preparationPath, retainCompactionSummary } from "./retention.js";
import { compactionDisabledReason, requestSettings } from "./settings.js";
import { summarizePreparation } from "./summarize.js";
import { RunNotes, truncate } from "./truncate.js";

/** `compaction/run`'s params; `strategy` defaults to `auto` for callers inside the daemon too. */
export type CompactionRunParams = Omit<ValidParamsOf<typeof CompactionRun>, "strategy"> & {
  strategy?: ValidParamsOf<typeof CompactionRun>["strategy"] | undefined;
};

export interface PipelineDeps {
  readonly sessions: SessionService;
  readonly settings: SessionSettings;
  readonly records: SessionRecords;
  /** The summarizer (and its fallback chain) for these settings and the asking client's model. */
  summarizerFor(settings: Settings["summarizer"], clientModel: ClientModel | undefined): Summarizer;
  readonly hooks?: CompactHooks | undefined;
}

/** The entry to commit, from a plugin or from the summarizers. */
interface ProducedCompaction {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number | null;
  details?: unknown;
  fromHook: boolean;
  summarizer: string;
  message: string;
  /** Set once the summary was checked (and repaired) against what it replaces. */
  retention?: RetentionReport;
}

type Failures = { failures: HookFailure[] };
type Produced = ({ kind: "cancel"; pluginId: string } | ({ kind: "compaction" } & ProducedCompaction)) & Failures;

export async function runCompaction(
  deps: PipelineDeps,
  params: CompactionRunParams,
  reporter: RunReporter,
  ctx: { readonly signal?: AbortSignal | undefined; readonly clientModel?: ClientModel | undefined },
): Promise<CompactionResult> {
  const { sessionId } = params;
  const { signal } = ctx;
  const applied = requestSettings(deps.settings.forSession(sessionId), {
    sources: deps.settings.sourcesFor?.(sessionId),
    overrides: params.settings,
    contextWindow: params.contextWindow,
  });
  const { settings, compaction } = applied;
  reporter.begin();
  let result: CompactionResult;
  try {
    const disabled = compactionDisabledReason(settings.context.mode, compaction, params.reason);
    if (disabled !== undefined) return finish(reporter, { status: "disabled", message: disabled });

    const window = params.contextWindow;
    const limits = window !== undefined ? truncationLimits(window, settings.compaction.prune.enabled) : undefined;
    const truncation = limits ? await truncate(deps.sessions, sessionId, limits, () => throwIfAborted(signal)) : undefined;
    const notes = new RunNotes(applied.conflict, truncation);
    const path = await deps.sessions.getContextPath(sessionId);
    throwIfAborted(signal);
    const prune = settings.compaction.prune;
    const rung = chooseRunRung(params, settings, path.entries);
    if (rung.kind === "prune") {
      if (rung.plan.hidden.length === 0) {
        return finish(reporter, {
          status: "nothing_to_compact",
          rung: "prune",
          message: notes.around(NOTHING_TO_PRUNE(prune.protectTokens, prune.minTokens)),
          ...notes.truncated(),
        });
      }
      const leafId = path.entries[path.entries.length - 1]!.entry.id;
      reporter.createJob("prepared", leafId);
      reporter.report(`Hiding ${rung.plan.hidden.length} old tool output(s)`, 50);
      throwIfAborted(signal);
      result = notes.into(commitPrune(deps.records, params, leafId, rung.plan, path.entries, reporter));
    } else {
      const prepared = prepareCompaction(await preparationPath(deps.sessions, sessionId, path), compaction, {
        ...(prune.enabled ? { pruneMinTokens: prune.minTokens } : {}),
        keepAtLeastBudget: applied.keepAtLeastBudget,
      });
      if ("nothing" in prepared) {
        return finish(reporter, { status: "nothing_to_compact", rung: "summarize", message: notes.around(prepared.nothing), ...notes.truncated() });
      }
      const { preparation } = prepared;
      reporter.createJob("prepared", preparation.leafId);

      const produced = await produce(deps, params, { settings, budget: applied.summaryBudget }, preparation, reporter, ctx);
      if (produced.kind === "compaction") retain(produced, preparation, settings, applied.summaryBudget);
      if (produced.kind === "cancel") {
        const stats = statsOf(preparation, preparation.firstKeptEntryId, path.entries, reporter);
        return finish(reporter, {
          status: "cancelled",
          rung: "summarize",
          message: notes.around(`cancelled by plugin ${produced.pluginId}`),
          stats,
          ...failuresOf(produced),
          ...notes.truncated(),
        });
      }
      // The last moment a cancel can still mean "nothing written": the commit below is synchronous.
      throwIfAborted(signal);
      reporter.report("Committing the summary", 90);
      // A plugin may keep another tail than prepared: only outputs it keeps are hidden.
      const tailPrune = keptPrune(preparation, produced.firstKeptEntryId, path.entries);
      const stats = statsOf(preparation, produced.firstKeptEntryId, path.entries, reporter, {
        summary: produced.summary,
        prune: tailPrune,
      });
      result = notes.into({ ...commit(deps.records, params, preparation, produced, tailPrune, stats, reporter), ...failuresOf(produced) });
    }
  } catch (error) {
    reporter.failed(error);
    throw error;
  }
  // Committed (or stale): from here on nothing may turn the run into a failure.
  if (result.pruned && result.pruned.entryId !== result.entry?.id) await countTokens(deps.sessions, sessionId, result.pruned.entryId);
  if (result.entry) await countTokens(deps.sessions, sessionId, result.entry.id);
  return reporter.ended(result);
}

function failuresOf(produced: Failures): { pluginFailures?: HookFailure[] } {
  return produced.failures.length > 0 ? { pluginFailures: produced.failures } : {};
}

/** A plugin's hook call running longer than this is reported (`$/progress`: "Waiting for plugin …"), then again each period. */
export const PLUGIN_WAIT_REPORT_MS = 1000;

/** Reports a plugin that keeps the run waiting, once a second while it does. */
class PluginWait {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly reporter: RunReporter) {}

  calling(pluginId: string | undefined): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (pluginId === undefined) return;
    const started = Date.now();
    this.timer = setInterval(() => {
      const seconds = Math.round((Date.now() - started) / 1000);
      this.reporter.report(`Waiting for plugin ${pluginId} (${seconds} s)`, 5);
    }, PLUGIN_WAIT_REPORT_MS);
    this.timer.unref();
  }
}

/** A plugin's decision, else the summarizers' summary. */
async function produce(
  deps: PipelineDeps,
  params: CompactionRunParams,
  { settings, budget }: { settings: Settings; budget: SummaryBudget | undefined },
  preparation: CompactionPreparation,
  reporter: RunReporter,
  ctx: { readonly signal?: AbortSignal | undefined; readonly clientModel?: ClientModel | undefined },
): Promise<Produced> {
  const { sessionId, customInstructions } = params;
  const { signal, clientModel } = ctx;
  const { hooks } = deps;
  const failures: HookFailure[] = [];
  if (hooks) {
    const waiting = new PluginWait(reporter);
    const onPluginCall = (pluginId: string | undefined) => waiting.calling(pluginId);
    const context = { sessionId, projectDir: deps.records.requireSession(sessionId).cwd, settings, clientModel, onPluginCall };
    if (hooks.hasCompactHook?.(context) !== false) {
      reporter.report("Asking plugins", 5);
      // Plugins may keep their own state anywhere on the branch: they get all of it that fits in one message.
      const branchEntries = deps.records.path(sessionId, preparation.leafId).map((stored) => stored.entry);
      const event = compactHookEvent(preparation, branchEntries, customInstructions, settings);
      const outcome = await hooks
        .runCompactHook(event, signal ?? new AbortController().signal, context)
        .finally(() => waiting.calling(undefined));
      throwIfAborted(signal);
      failures.push(...(outcome?.failures ?? []).map(({ pluginId, kind, message }) => ({ pluginId, kind, message })));
      if (outcome && "cancel" in outcome) return { kind: "cancel", pluginId: outcome.pluginId, failures };
      if (outcome && "compaction" in outcome) {
        const { compaction, pluginId } = outcome;
        return {
          failures,
          kind: "compaction",
          summary: compaction.summary,
          firstKeptEntryId: compaction.firstKeptEntryId,
          tokensBefore: compaction.tokensBefore,
          ...(compaction.details !== undefined ? { details: compaction.details } : {}),
          fromHook: true,
          summarizer: `plugin:${pluginId}`,
          message: `summary written by plugin ${pluginId}`,
        };
      }
    }
  }

  const summarizer = deps.summarizerFor(settings.summarizer, clientModel);
  reporter.setState("summarizing", { summarizer: summarizer.id });
  reporter.report(`Summarizing ${describeRange(preparation)} with ${describeChain(summarizer, settings.summarizer.fallback)}`, 10);
  const summarized = await summarizePreparation(preparation, {
    summarizer,
    fallback: settings.summarizer.fallback,
    customInstructions,
    signal,
    sessionId,
    budget,
  });
  const { fallback } = summarized.details;
  return {
    failures,
    kind: "compaction",
    // Capped with retention (retain): a body near the cap is cut to leave room for repair.
    summary: summarized.summary,
    firstKeptEntryId: preparation.firstKeptEntryId,
    tokensBefore: preparation.tokensBefore,
    details: summarized.details,
    fromHook: false,
    summarizer: summarized.details.summarizer,
    message:
      `summarized ${describeRange(preparation)} with ${writtenBy(summarized.details.summarizer, summarizer)}` +
      (fallback ? ` (fallback: ${(summarized.details.fallbacks ?? [fallback]).map((record) => record.error).join("; then ")})` : ""),
  };
}

/**
 * Checks the summary, whoever wrote it, and repairs it when `summary.repair` is on; with a window
 * it is capped at the window's summary budget (a plugin's too: the context must fit).
 */
function retain(
  produced: ProducedCompaction,
  preparation: CompactionPreparation,
  settings: Settings,
  budget: SummaryBudget | undefined,
): void {
  // Capped here, with repair, so the report describes the stored text.
  const retained = retainCompactionSummary(preparation, produced.summary, {
    repair: settings.summary.repair,
    maxBytes: settings.limits.maxSummaryBytes,
    budget,
  });
  produced.summary = retained.summary;
  produced.retention = retained.retention;
  produced.details = detailsWithRetention(produced.details, retained.retention);
}

/**
 * Appends the compaction under the current leaf if the prepared leaf is still on its path, and
 * records the job's outcome in the same transaction. Entries appended meanwhile stay kept.
 */
function commit(
  records: SessionRecords,
  params: CompactionRunParams,
  preparation: CompactionPreparation,
  produced: ProducedCompaction,
  tailPrune: PrunePlan,
  stats: CompactionStats,
  reporter: RunReporter,
): CompactionResult {
  const jobId = reporter.job!;
  const entry: EntryInput = {
    type: "compaction",
    summary: produced.summary,
    firstKeptEntryId: produced.firstKeptEntryId,
    tokensBefore: produced.tokensBefore,
    ...(produced.details !== undefined ? { details: produced.details } : {}),
    ...(produced.fromHook ? { fromHook: true } : {}),
    ...(params.customInstructions !== undefined ? { customInstructions: params.customInstructions } : {}),
  };
  // The prune entry goes first, so the compaction stays the leaf (what "already compacted" and
  // overflow recovery look for); it lies in the kept part, where the context reads it.
  const entries: EntryInput[] = tailPrune.hidden.length > 0 ? [pruneEntryInput(tailPrune), entry] : [entry];
  let result: CompactionResult | undefined;
  records.appendRecorded(
    {
      sessionId: params.sessionId,
      entries,
      onlyIfOnPath: preparation.leafId,
      // Also in request_results: a second process retrying the same requestId replays this entry.
      request: params.requestId !== undefined ? { id: params.requestId, method: CompactionRun.method, extra: { jobId } } : undefined,
    },
    (outcome) => {
      result = resultOf(outcome, produced, tailPrune, stats, jobId);
      records.jobs.update(jobId, reporter.finalUpdate(result));
    },
  );
  return result!;
}

function resultOf(
  outcome: AppendOutcome,
  produced: ProducedCompaction,
  tailPrune: PrunePlan,
  stats: CompactionStats,
  jobId: string,
): CompactionResult {
  if (outcome.status === "stale") {
    return {
      status: "stale",
      message:
        "the session moved to another branch while the summary was written: the leaf it was prepared for is no longer on the current path; nothing was written",
      summarizer: produced.summarizer,
      jobId,
      stats,
      rung: "summarize",
      ...(produced.retention ? { retention: produced.retention } : {}),
    };
  }
  const pruneText = tailPrune.hidden.length > 0 ? `; ${describePrune(tailPrune)} of the kept part` : "";
  const message =
    outcome.status === "replayed" ? "already committed by an earlier attempt with this requestId" : produced.message + pruneText;
  const compactionEntry = outcome.entries[outcome.entries.length - 1]!.entry;
  const pruneEntry = outcome.entries.length > 1 ? outcome.entries[0]!.entry : undefined;
  return {
    status: "committed",
    entry: compactionEntry,
    summarizer: produced.summarizer,
    message,
    jobId,
    stats,
    rung: "summarize",
    ...(produced.retention ? { retention: produced.retention } : {}),
    ...(pruneEntry ? { pruned: { entryId: pruneEntry.id, outputs: tailPrune.hidden.length, tokensSaved: tailPrune.tokensSaved } } : {}),
  };
}

/**
 * The rung of this run: `prune` or `summarize` when asked; for `auto`, pruning when hiding the
 * oldest outputs brings the context `minSavings` under the threshold (only as many as that takes).
 * Auto needs the context window to know the threshold (turn/end gives it); an overflow always
 * summarizes (the context did not fit at all). With a window, pruning never takes the context
 * under the kept part's size. `settings` are the request's (sizes fitted to its window).
 */
function chooseRunRung(
  params: CompactionRunParams,
  settings: Settings,
  path: readonly CountedEntry[],
): { kind: "prune"; plan: PrunePlan } | { kind: "summarize" } {
  const strategy = params.strategy ?? "auto";
  const { prune, reserveTokens, keepRecentTokens } = settings.compaction;
  const window = params.contextWindow;
  if (strategy === "summarize" || (strategy === "auto" && (!prune.enabled || window === undefined || params.reason === "overflow"))) {
    return { kind: "summarize" };
  }
  const plan = planPrune(path, prune);
  if (window === undefined) return { kind: "prune", plan };
  const tokens = estimateContextTokens(path).tokens;
  const floor = { tokens, floorTokens: keepRecentTokens };
  if (strategy === "prune") return { kind: "prune", plan: fitPlan(path, plan, floor) };
  const threshold = window - reserveTokens;
  const fitted = fitPlan(path, plan, { ...floor, targetTokens: threshold - prune.minSavings });
  if (fitted.hidden.length === 0) return { kind: "summarize" };
  return chooseRung(tokens, threshold, fitted, prune.minSavings) === "prune" ? { kind: "prune", plan: fitted } : { kind: "summarize" };
}

function NOTHING_TO_PRUNE(protectTokens: number, minTokens: number): string {
  return `nothing to prune: no tool output above ${minTokens} tokens lies before the newest ${protectTokens} tokens of the context`;
}

function describePrune(plan: PrunePlan): string {
  const count = plan.hidden.length;
  return `hid ${count} tool output${count === 1 ? "" : "s"} (${plan.tokensSaved.toLocaleString("en-US")} tokens)`;
}

/** The prune entry alone, under the leaf the plan was made for, with the job's outcome. */
function commitPrune(
  records: SessionRecords,
  params: CompactionRunParams,
  leafId: string,
  plan: PrunePlan,
  path: readonly CountedEntry[],
  reporter: RunReporter,
): CompactionResult {
  const jobId = reporter.job!;
  const estimate = estimateContextTokens(path);
  const tokensBefore = estimate.measurable ? estimate.tokens : null;
  const stats: CompactionStats = {
    summarizedMessages: 0,
    turnPrefixMessages: 0,
    keptEntries: path.length,
    isSplitTurn: false,
    tokensBefore,
    durationMs: reporter.elapsedMs(),
    ...(tokensBefore !== null ? { tokensAfter: Math.max(0, tokensBefore - plan.tokensSaved), tokensSaved: plan.tokensSaved } : {}),
  };
  let result: CompactionResult | undefined;
  records.appendRecorded(
    {
      sessionId: params.sessionId,
      entries: [pruneEntryInput(plan)],
      onlyIfOnPath: leafId,
      request: params.requestId !== undefined ? { id: params.requestId, method: CompactionRun.method, extra: { jobId } } : undefined,
    },
    (outcome) => {
      if (outcome.status === "stale") {
        result = {
          status: "stale",
          message: "the session moved to another branch meanwhile: nothing was pruned",
          jobId,
          stats,
          rung: "prune",
        };
      } else {
        const entry = outcome.entries[0]!.entry;
        const message =
          outcome.status === "replayed"
            ? "already committed by an earlier attempt with this requestId"
            : `${describePrune(plan)}, no model call`;
        result = {
          status: "committed",
          entry,
          message,
          jobId,
          stats,
          rung: "prune",
          pruned: { entryId: entry.id, outputs: plan.hidden.length, tokensSaved: plan.tokensSaved },
        };
      }
      records.jobs.update(jobId, reporter.finalUpdate(result));
    },
  );
  return result!;
}

/** The preparation's tail pruning, limited to the tail actually kept (a plugin may keep another). */
function keptPrune(preparation: CompactionPreparation, firstKeptEntryId: string, path: readonly CountedEntry[]): PrunePlan {
  const planned = preparation.prune;
  if (!planned || planned.hidden.length === 0) return EMPTY_PRUNE_PLAN;
  if (firstKeptEntryId === preparation.firstKeptEntryId) return planned;
  const firstKept = path.findIndex((item) => item.entry.id === firstKeptEntryId);
  return firstKept < 0 ? EMPTY_PRUNE_PLAN : planFrom(path, planned, firstKept);
}

/** Records a result that wrote nothing and notifies its end. */
function finish(reporter: RunReporter, result: Omit<CompactionResult, "jobId">): CompactionResult {
  const jobId = reporter.job ?? reporter.createJob(result.status === "disabled" ? "disabled" : "nothing");
  const full: CompactionResult = { ...result, jobId };
  const update = reporter.finalUpdate(full);
  reporter.setState(update.state, { error: update.error, result: full });
  return reporter.ended(full);
}

function statsOf(
  preparation: CompactionPreparation,
  firstKeptEntryId: string,
  path: readonly CountedEntry[],
  reporter: RunReporter,
  after?: { summary: string; prune: PrunePlan },
): CompactionStats {
  const firstKept = path.findIndex((item) => item.entry.id === firstKeptEntryId);
  const stats: CompactionStats = {
    summarizedMessages: preparation.messagesToSummarize.length,
    turnPrefixMessages: preparation.turnPrefixMessages.length,
    keptEntries: firstKept >= 0 ? path.length - firstKept : 0,
    isSplitTurn: preparation.isSplitTurn,
    tokensBefore: preparation.tokensBefore,
    durationMs: reporter.elapsedMs(),
  };
  if (after && preparation.tokensBefore !== null && firstKept >= 0) {
    // The kept part as the context will hold it (hidden outputs as stubs), plus the summary.
    const counted = withPrunedCounts(path, withPlan(prunedOutputs(path), after.prune));
    let kept = 0;
    for (let i = firstKept; i < counted.length; i++) if (isContextVisible(counted[i]!.entry)) kept += counted[i]!.tokens;
    const tokensAfter = kept + stubTokenCount(compactionSummaryText(after.summary));
    stats.tokensAfter = tokensAfter;
    stats.tokensSaved = preparation.tokensBefore - tokensAfter;
  }
  return stats;
}

/** The summarizer that wrote the text, with its host when it is a model the settings name (no surprise hosts). */
function writtenBy(id: string, summarizer: Summarizer): string {
  const member = summarizerChain(summarizer).find((candidate) => candidate.id === id);
  return member?.description !== undefined && member.id.startsWith("openai:") ? member.description : id;
}

function describeRange(preparation: CompactionPreparation): string {
  const count = preparation.messagesToSummarize.length;
  const messages = `${count} message${count === 1 ? "" : "s"}`;
  return preparation.isSplitTurn ? `${messages} and the first ${preparation.turnPrefixMessages.length} of a split turn` : messages;
}

/** Stores the new entry's token count before replying (an append leaves it to the next write): a compaction is rare. */
async function countTokens(sessions: SessionService, sessionId: string, entryId: string): Promise<void> {
  try {
    await sessions.getEntry({ sessionId, entryId });
  } catch {
    // A later reader counts it; the compaction itself is committed.
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof CancelledError ? signal.reason : new CancelledError();
}
