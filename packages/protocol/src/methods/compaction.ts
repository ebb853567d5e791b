import { z } from "zod";
import { ContextWindow, IdString, ProgressToken } from "../limits.js";
import { notification, request } from "../declare.js";
import { AssistantMessage, PrunedOutput, SessionEntry } from "../entries.js";
import { RequestId } from "./sessions.js";
import { ContextMessage } from "./context.js";
import { CompactionSettings } from "./settings.js";

// Object and union schemas are `z.lazy`: built on first use, not when this module loads (see
// ../entries.ts, docs/architecture.md#start-path-and-bundles).

export const FileOps = z.lazy(() => z.object({ readFiles: z.array(z.string()), modifiedFiles: z.array(z.string()) }));

/** What compaction will do, computed without side effects (docs/design.md#compaction). */
export const CompactionPreparation = z.lazy(() =>
  z.object({
    /** The leaf the preparation was computed for; a commit is stale when it left the path. */
    leafId: z.string(),
    firstKeptEntryId: z.string(),
    /** Context messages: agent messages plus branch summaries that lie in the summarized range. */
    messagesToSummarize: z.array(ContextMessage),
    /** Ids of the entries behind `messagesToSummarize`, in order. */
    summarizeEntryIds: z.array(z.string()),
    turnPrefixMessages: z.array(ContextMessage),
    turnPrefixEntryIds: z.array(z.string()),
    isSplitTurn: z.boolean(),
    tokensBefore: z.number().int().nullable(),
    previousSummary: z.string().optional(),
    fileOps: FileOps,
    settings: CompactionSettings,
    /**
     * Tool results of the kept part hidden in the same step (the prune rung alongside the summary,
     * docs/compaction-rungs.md): recorded as a `prune` entry with the compaction. The summarizer
     * still reads every output it summarizes in full.
     */
    prune: z.object({ hidden: z.array(PrunedOutput), tokensSaved: z.number().int() }).optional(),
  }),
);

export type FileOps = z.infer<typeof FileOps>;
export type CompactionPreparation = z.infer<typeof CompactionPreparation>;

export const CompactionPrepare = request(
  "compaction/prepare",
  () => z.object({
    sessionId: IdString(),
    settings: CompactionSettings.partial().optional(),
    contextWindow: ContextWindow()
      .optional()
      .describe("The model's window: the sizes not set follow their share of it, as compaction/run does."),
  }),
  () => z.union([
    z.object({ preparation: CompactionPreparation }),
    z.object({ nothing: z.string() }),
  ]),
);

export const CompactionReason = z.enum(["manual", "threshold", "overflow"]);
/**
 * Which rung a run may take (docs/compaction-rungs.md): `prune` hides old tool output (no model
 * call), `summarize` writes a summary (pruning the kept tail's large outputs in the same step when
 * `compaction.prune.enabled`), `auto` prunes when that alone brings the context
 * `compaction.prune.minSavings` under the threshold (needs `contextWindow`; it then hides only the
 * oldest outputs that takes), else summarizes.
 */
export const CompactionStrategy = z.enum(["auto", "prune", "summarize"]);
/** The rung a run took. */
export const CompactionRung = z.enum(["prune", "summarize"]);
export type CompactionStrategy = z.infer<typeof CompactionStrategy>;
export type CompactionRung = z.infer<typeof CompactionRung>;
export const CompactionStatus = z.enum(["committed", "nothing_to_compact", "cancelled", "stale", "disabled"]);

/** What a run did, for clients that show it (counts are of context messages). */
export const CompactionStats = z.lazy(() =>
  z.object({
    /** Messages summarized as history (`preparation.messagesToSummarize`). */
    summarizedMessages: z.number().int(),
    /** Messages of the split turn's prefix that were summarized separately (0 without a split turn). */
    turnPrefixMessages: z.number().int(),
    /** Entries kept verbatim: from `firstKeptEntryId` to the prepared leaf. */
    keptEntries: z.number().int(),
    isSplitTurn: z.boolean(),
    /** `preparation.tokensBefore`: the context estimate before compaction (null when not measurable). */
    tokensBefore: z.number().int().nullable(),
    /** Wall time of the run, preparation to commit. */
    durationMs: z.number().int(),
    /**
     * Estimate of the context after the run: the kept part (hidden outputs as their stubs) plus the
     * summary at four characters a token. Absent when tokensBefore is null.
     */
    tokensAfter: z.number().int().optional(),
    /** `tokensBefore − tokensAfter`. */
    tokensSaved: z.number().int().optional(),
  }),
);
export type CompactionStats = z.infer<typeof CompactionStats>;

/** Kept / total items of one probe kind. */
export const RetentionCount = z.lazy(() =>
  z.object({ kept: z.number().int().nonnegative(), total: z.number().int().nonnegative() }),
);

/**
 * What a summary kept of the messages it replaces (docs/retention.md): every file read or
 * modified, the first line of every error, each user request, each user constraint, the last
 * stated plan or open question. Stored on the summary entry as `details.retention` (when the
 * entry's `details` is an object, or absent) and returned by `compaction/run`, `turn/end`
 * checkpoints and `tree/navigate`. Counted after repair (`summary.repair`), which appends missing
 * files, errors and constraints verbatim under "## Critical Context".
 */
export const RetentionReport = z.lazy(() =>
  z
    .object({
      files: RetentionCount,
      errors: RetentionCount,
      requests: RetentionCount,
      constraints: RetentionCount,
      plan: RetentionCount,
      missing: z
        .object({
          files: z.array(z.string()),
          errors: z.array(z.string()),
          requests: z.array(z.string()),
          constraints: z.array(z.string()),
          plan: z.array(z.string()),
        })
        .describe("The items the summary lost, per kind (at most 50 each; the counts are exact)."),
      repaired: z
        .object({ files: z.number().int(), errors: z.number().int(), constraints: z.number().int() })
        .optional()
        .describe('How many items repair appended under "## Critical Context"; absent when summary.repair is off.'),
      unjudged: z
        .object({ requests: z.number().int(), constraints: z.number().int() })
        .optional()
        .describe(
          "What the probes saw but could not judge with confidence, so the counts do not cover it: user messages that may or " +
            "may not ask for work, sentences with a rule's words (should, only…) that may not be standing rules. Absent: none.",
        ),
    })
    .describe("Kept / total per probe kind (files, errors, requests, constraints, plan) and the items lost."),
);
export type RetentionReport = z.infer<typeof RetentionReport>;

/** A plugin that failed while a compaction asked it (it was skipped; the run went on without it). */
export const HookFailure = z.lazy(() =>
  z.object({
    pluginId: z.string(),
    /** timeout, crash, oom, invalid-result, exception, activation. */
    kind: z.string(),
    /** What went wrong; for an exception, where in the plugin's files: "… (at index.ts:12:11)". */
    message: z.string(),
  }),
);

export type HookFailure = z.infer<typeof HookFailure>;

export const CompactionResult = z.lazy(() =>
  z.object({
    status: CompactionStatus,
    entry: SessionEntry.optional(),
    summarizer: z.string().optional(),
    message: z.string().optional(),
    /** The durable job that recorded this run (see `compaction/status`). */
    jobId: z.string().optional(),
    /** Present once a preparation existed (committed, cancelled by a plugin, stale). */
    stats: CompactionStats.optional(),
    /** The rung the run took (absent when it ended before choosing: disabled). */
    rung: CompactionRung.optional(),
    /**
     * The `prune` entry written, alone (rung `prune`) or with the summary: how many tool outputs it
     * hides and the tokens that saves.
     */
    pruned: z.object({ entryId: z.string(), outputs: z.number().int(), tokensSaved: z.number().int() }).optional(),
    /** What the summary kept (committed and stale results): also `entry.details.retention`. */
    retention: RetentionReport.optional().describe(
      "What the summary kept of the messages it replaced: files, error lines, user requests, user constraints, the last plan " +
        "(counted after repair, see docs/retention.md); also stored as entry.details.retention.",
    ),
    /** Plugins that failed during this run; the summary then came from another plugin or the summarizer. */
    pluginFailures: z.array(HookFailure).optional(),
    truncated: z
      .object({ entryId: z.string(), outputs: z.number().int(), tokensSaved: z.number().int() })
      .optional()
      .describe(
        "The prune entry a run with a contextWindow wrote first, cutting tool outputs larger than their share of the window " +
          "(docs/compaction-rungs.md#outputs-larger-than-the-window): how many, and the tokens it saved.",
      ),
  }),
);
export type CompactionResult = z.infer<typeof CompactionResult>;

export const CompactionRun = request(
  "compaction/run",
  () => z.object({
    sessionId: IdString(),
    customInstructions: z.string().optional(),
    reason: CompactionReason.default("manual"),
    requestId: RequestId.optional(),
    workDoneToken: ProgressToken().optional(),
    /** Overrides of the session's `compaction.*` settings for this run only (e.g. keepRecentTokens). */
    settings: CompactionSettings.partial().optional(),
    strategy: CompactionStrategy.default("auto").describe(
      "auto (default): prune when that alone brings the context compaction.prune.minSavings under the threshold " +
        "(contextWindow − reserveTokens; without contextWindow auto summarizes), hiding only the oldest outputs that takes, else summarize. " +
        "prune: only hide old tool output. summarize: write a summary (and hide the kept tail's large outputs when compaction.prune.enabled).",
    ),
    contextWindow: ContextWindow()
      .optional()
      .describe(
        "The model's context window (turn/end passes its own): `auto` compares against its threshold, the sizes not set " +
          "follow their share of it, tool outputs larger than theirs are cut first, and no rung leaves less than the kept part.",
      ),
  }),
  () => CompactionResult,
);

/**
 * States of a compaction job: `prepared` → `summarizing` → one of the final states.
 * `nothing` / `disabled` end a run that had nothing to do; `interrupted` marks a job whose
 * daemon ended while it was running (found at the next start).
 */
export const CompactionJobState = z.enum([
  "prepared",
  "summarizing",
  "committed",
  "cancelled",
  "failed",
  "stale",
  "nothing",
  "disabled",
  "interrupted",
]);
export type CompactionJobState = z.infer<typeof CompactionJobState>;

/** One `compaction/run` as recorded in the database. */
export const CompactionJob = z.lazy(() =>
  z.object({
    id: z.string(),
    sessionId: z.string(),
    requestId: z.string().optional(),
    reason: CompactionReason,
    state: CompactionJobState,
    /** The leaf the compaction was prepared for. */
    leafId: z.string().optional(),
    createdAt: z.string(),
    updatedAt: z.string(),
    endedAt: z.string().optional(),
    durationMs: z.number().int().optional(),
    summarizer: z.string().optional(),
    /** Why it failed, was cancelled or went stale. */
    error: z.string().optional(),
    /** The committed compaction entry. */
    entryId: z.string().optional(),
    /** The reply the run gave (what a retried requestId gets back once committed). */
    result: CompactionResult.optional(),
  }),
);
export type CompactionJob = z.infer<typeof CompactionJob>;

/**
 * `compaction/status { sessionId } | { requestId }`: the latest jobs, newest first. With a
 * `requestId` (optionally within one session) the jobs that carried it; with a `sessionId`
 * alone the session's latest `limit` jobs (default 10).
 */
export const CompactionStatusRequest = request(
  "compaction/status",
  () => z
    .object({
      sessionId: IdString().optional(),
      requestId: RequestId.optional(),
      limit: z.number().int().min(1).max(100).optional(),
    })
    .refine((p) => p.sessionId !== undefined || p.requestId !== undefined, { message: "give a `sessionId` or a `requestId`" }),
  () => z.object({ jobs: z.array(CompactionJob) }),
);

export const ToolBatch = z.lazy(() => z.object({ results: z.array(z.object({ terminate: z.boolean() })) }));

export const TurnEnd = request(
  "turn/end",
  () => z.object({
    sessionId: IdString(),
    contextWindow: ContextWindow().describe(
        "The model's context window in tokens; the threshold is this minus compaction.reserveTokens (capped at a quarter of it when not set).",
      ),
    assistant: AssistantMessage.optional().describe(
      "The turn's final reply, when the client has not stored it: the daemon appends it (assistantEntryId). " +
        "Omit it when the reply is already in the session (entry/append): the daemon reads the turn's reply at the end of the path. " +
        "A failed call is a reply with stopReason \"error\" and the provider's errorMessage (how an overflow is recognised).",
    ),
    toolBatch: ToolBatch.optional().describe(
      "The turn's tool results: a batch that did not ask to terminate asks for a follow-up; one whose every result did, does not.",
    ),
    queuedInputs: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe("Client inputs waiting to be sent (typed while the model worked): any asks for a follow-up."),
    requestId: RequestId.optional(),
    /** `$/progress` of a compaction this turn/end runs, as for `compaction/run`. */
    workDoneToken: ProgressToken().optional(),
  }),
  () => z.object({
    checkpoint: CompactionResult.optional(),
    followUp: z.enum(["none", "continue", "retry"]),
    message: z.string().optional(),
    /** The entry the daemon stored for `assistant` (when given). */
    assistantEntryId: z.string().optional(),
    /** The context estimate the threshold was checked with (absent when the turn skipped the check). */
    usage: z.object({ tokens: z.number().int(), threshold: z.number().int() }).optional(),
    /**
     * Set when the reply was a context overflow: `recovered` when an overflow checkpoint committed
     * (follow-up `retry`, unless `failedAfterCheckpoint`), else not (second overflow before a
     * successful turn or new input, compaction off, nothing to compact).
     */
    overflow: z.object({ recovered: z.boolean() }).optional(),
    /**
     * A checkpoint committed and a later step of this turn/end failed (this message says which):
     * the checkpoint stands, is not summarized again, and nothing resumes by itself.
     */
    failedAfterCheckpoint: z.string().optional(),
  }),
);

export const CompactionDidStart = notification(
  "compaction/didStart",
  () => z.object({ sessionId: z.string(), reason: CompactionReason }),
);
/** `status` is a CompactionStatus, or `"failed"` when the run ended with an error (-32800 / -32803 …). */
export const CompactionDidEnd = notification(
  "compaction/didEnd",
  () => z.object({ sessionId: z.string(), reason: CompactionReason, status: z.string(), entryId: z.string().optional() }),
);

/** The `value` of `$/progress` for a run's `workDoneToken` (LSP WorkDoneProgress). */
export type CompactionProgress =
  | { kind: "begin"; title: string; cancellable?: boolean; message?: string; percentage?: number }
  | { kind: "report"; message?: string; percentage?: number }
  | { kind: "end"; message?: string };
