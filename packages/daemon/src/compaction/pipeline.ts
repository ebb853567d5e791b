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
  type EntryInput,
  type RetentionReport,
  type Settings,
  type ValidParamsOf,
} from "@base-context/protocol";
import { detailsWithRetention, prepareCompaction } from "../core/index.js";
import { CancelledError } from "../errors.js";
import type { CountedEntry, SessionService } from "../sessions/index.js";
import type { AppendOutcome, SessionStore } from "../store/index.js";
import { describeChain, summarizerChain, type ClientModel, type Summarizer } from "../summarizer/index.js";
import type { CompactHooks } from "./hooks.js";
import type { RunReporter } from "./reporter.js";
import { retainCompactionSummary } from "./retention.js";
import { compactionDisabledReason, effectiveCompactionSettings } from "./settings.js";
import { summarizePreparation } from "./summarize.js";

export type CompactionRunParams = ValidParamsOf<typeof CompactionRun>;

export interface PipelineDeps {
  readonly sessions: SessionService;
  readonly store: SessionStore;
  settingsFor(sessionId: string): Settings;
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

type Produced = { kind: "cancel"; pluginId: string } | ({ kind: "compaction" } & ProducedCompaction);

export async function runCompaction(
  deps: PipelineDeps,
  params: CompactionRunParams,
  reporter: RunReporter,
  ctx: { readonly signal?: AbortSignal | undefined; readonly clientModel?: ClientModel | undefined },
): Promise<CompactionResult> {
  const { sessionId } = params;
  const { signal } = ctx;
  const settings = deps.settingsFor(sessionId);
  const compaction = effectiveCompactionSettings(settings, params.settings);
  reporter.begin();
  let result: CompactionResult;
  try {
    const disabled = compactionDisabledReason(settings.context.mode, compaction, params.reason);
    if (disabled !== undefined) return finish(reporter, { status: "disabled", message: disabled });

    const path = await deps.sessions.getContextPath(sessionId);
    throwIfAborted(signal);
    const prepared = prepareCompaction(path.entries, compaction);
    if ("nothing" in prepared) return finish(reporter, { status: "nothing_to_compact", message: prepared.nothing });
    const { preparation } = prepared;
    reporter.createJob("prepared", preparation.leafId);

    const produced = await produce(deps, params, settings, preparation, reporter, ctx);
    if (produced.kind === "compaction") retain(produced, preparation, settings);
    if (produced.kind === "cancel") {
      const stats = statsOf(preparation, preparation.firstKeptEntryId, path.entries, reporter);
      return finish(reporter, { status: "cancelled", message: `cancelled by plugin ${produced.pluginId}`, stats });
    }
    // The last moment a cancel can still mean "nothing written": the commit below is synchronous.
    throwIfAborted(signal);
    reporter.report("Committing the summary", 90);
    const stats = statsOf(preparation, produced.firstKeptEntryId, path.entries, reporter);
    result = commit(deps.store, params, preparation, produced, stats, reporter);
  } catch (error) {
    reporter.failed(error);
    throw error;
  }
  // Committed (or stale): from here on nothing may turn the run into a failure.
  if (result.entry) await countTokens(deps.sessions, sessionId, result.entry.id);
  return reporter.ended(result);
}

/** A plugin's decision, else the summarizers' summary. */
async function produce(
  deps: PipelineDeps,
  params: CompactionRunParams,
  settings: Settings,
  preparation: CompactionPreparation,
  reporter: RunReporter,
  ctx: { readonly signal?: AbortSignal | undefined; readonly clientModel?: ClientModel | undefined },
): Promise<Produced> {
  const { sessionId, customInstructions } = params;
  const { signal, clientModel } = ctx;
  const { hooks } = deps;
  if (hooks) {
    const context = { sessionId, projectDir: deps.store.requireSession(sessionId).cwd, settings, clientModel };
    if (hooks.hasCompactHook?.(context) !== false) {
      reporter.report("Asking plugins", 5);
      // Plugins may keep their own state anywhere on the branch: they get all of it.
      const branchEntries = deps.store.path(sessionId, preparation.leafId).map((stored) => stored.entry);
      const event = { preparation, branchEntries, ...(customInstructions !== undefined ? { customInstructions } : {}) };
      const outcome = await hooks.runCompactHook(event, signal ?? new AbortController().signal, context);
      throwIfAborted(signal);
      if (outcome && "cancel" in outcome) return { kind: "cancel", pluginId: outcome.pluginId };
      if (outcome) {
        const { compaction, pluginId } = outcome;
        return {
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
  });
  const { fallback } = summarized.details;
  return {
    kind: "compaction",
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

/** Checks the summary, whoever wrote it, and repairs it when `summary.repair` is on. */
function retain(produced: ProducedCompaction, preparation: CompactionPreparation, settings: Settings): void {
  const retained = retainCompactionSummary(preparation, produced.summary, settings.summary.repair);
  produced.summary = retained.summary;
  produced.retention = retained.retention;
  produced.details = detailsWithRetention(produced.details, retained.retention);
}

/**
 * Appends the compaction under the current leaf if the prepared leaf is still on its path, and
 * records the job's outcome in the same transaction. Entries appended meanwhile stay kept.
 */
function commit(
  store: SessionStore,
  params: CompactionRunParams,
  preparation: CompactionPreparation,
  produced: ProducedCompaction,
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
  let result: CompactionResult | undefined;
  store.appendRecorded(
    {
      sessionId: params.sessionId,
      entries: [entry],
      onlyIfOnPath: preparation.leafId,
      // Also in request_results: a second process retrying the same requestId replays this entry.
      request: params.requestId !== undefined ? { id: params.requestId, method: CompactionRun.method, extra: { jobId } } : undefined,
    },
    (outcome) => {
      result = resultOf(outcome, produced, stats, jobId);
      store.jobs.update(jobId, reporter.finalUpdate(result));
    },
  );
  return result!;
}

function resultOf(outcome: AppendOutcome, produced: ProducedCompaction, stats: CompactionStats, jobId: string): CompactionResult {
  if (outcome.status === "stale") {
    return {
      status: "stale",
      message: "the session moved to another branch while the summary was written: the leaf it was prepared for is no longer on the current path; nothing was written",
      summarizer: produced.summarizer,
      jobId,
      stats,
      ...(produced.retention ? { retention: produced.retention } : {}),
    };
  }
  const message = outcome.status === "replayed" ? "already committed by an earlier attempt with this requestId" : produced.message;
  return {
    status: "committed",
    entry: outcome.entries[0]!.entry,
    summarizer: produced.summarizer,
    message,
    jobId,
    stats,
    ...(produced.retention ? { retention: produced.retention } : {}),
  };
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
): CompactionStats {
  const firstKept = path.findIndex((item) => item.entry.id === firstKeptEntryId);
  return {
    summarizedMessages: preparation.messagesToSummarize.length,
    turnPrefixMessages: preparation.turnPrefixMessages.length,
    keptEntries: firstKept >= 0 ? path.length - firstKept : 0,
    isSplitTurn: preparation.isSplitTurn,
    tokensBefore: preparation.tokensBefore,
    durationMs: reporter.elapsedMs(),
  };
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

/** Stores the new entry's token count before replying, as every append does. */
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
