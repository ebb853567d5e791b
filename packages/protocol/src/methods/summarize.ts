/**
 * Summaries as a service, for agents that keep their own store (docs/summaries-as-a-service.md):
 * the agent sends what it would summarize, the daemon runs the same pipeline as a stored
 * compaction or branch summary (plugins' hooks, the summarizer chain with the client's model,
 * the retention check and repair) and answers with the summary and its `details`. Nothing is
 * stored. Both are cancellable (`$/cancelRequest`) and report `$/progress` for a `workDoneToken`.
 */
import { z } from "zod";
import { ContextWindow, IdString, PathString, ProgressToken } from "../limits.js";
import { request } from "../declare.js";
import { SessionEntry } from "../entries.js";
import { FileOps, RetentionReport } from "./compaction.js";
import { CompactionSettings } from "./settings.js";
import { ContextMessage } from "./context.js";

// Object and union schemas are `z.lazy`: built on first use, not when this module loads (see
// ../entries.ts, docs/architecture.md#start-path-and-bundles).

/** Who the summary is for: whose settings and trusted plugins apply, and what a client model is told. */
const Origin = {
  /**
   * The project whose settings (`.base-context/settings.json`) and trusted plugins apply.
   * Default: the `projectDir` the client gave at `initialize`, else only the global settings and plugins.
   */
  projectDir: PathString().min(1).optional(),
  /** The agent's own id of its session: passed to plugins and to the client's model, nothing is stored under it. */
  sessionId: IdString().optional(),
  workDoneToken: ProgressToken().optional(),
};

/**
 * - `summarized`: `summary` and `details` are the result;
 * - `cancelled`: a plugin's hook cancelled the operation (`pluginId` says which); the agent should
 *   not compact (or not navigate). A `$/cancelRequest` is not a status: the reply is error -32800.
 */
export const SummarizeStatus = z.enum(["summarized", "cancelled"]);

export const SummarizeResult = z.lazy(() =>
  z.object({
    status: SummarizeStatus,
    /** The summary to store, already checked against what it replaces (and repaired when `summary.repair` is on). */
    summary: z.string().optional(),
    /**
     * What to store with it: the file lists (`readFiles`, `modifiedFiles`), `summarizer`, `fallback`
     * and `fallbacks` when a model failed, and `retention` (the same report as `retention` below).
     * A plugin's summary carries the plugin's own `details` with `retention` added.
     */
    details: z.unknown().optional(),
    /**
     * Who wrote the summary: `plugin:<id>`, `client:<model>`, `openai:<model>`, `extractive`, or `none`
     * when there was nothing to summarize (the previous summary carried over, or an empty branch).
     */
    summarizer: z.string().optional(),
    /** What the summary kept of the probes read from what it replaces. */
    retention: RetentionReport.optional(),
    /** The first kept entry a plugin chose (when the agent sent `firstKeptEntryId`): keep from there. */
    firstKeptEntryId: z.string().optional(),
    /** Which plugin wrote or cancelled it, when one did. */
    pluginId: z.string().optional(),
    /** What happened, for people. */
    message: z.string(),
  }),
);
export type SummarizeResult = z.infer<typeof SummarizeResult>;

/**
 * `$/progress` values for a `workDoneToken`, shaped as LSP's work-done progress: one `begin`,
 * `report`s, one `end`.
 */
export const SummarizeProgress = z.lazy(() =>
  z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("begin"), title: z.string(), cancellable: z.boolean().optional() }),
    z.object({ kind: z.literal("report"), message: z.string() }),
    z.object({ kind: z.literal("end"), message: z.string().optional() }),
  ]),
);
export type SummarizeProgress = z.infer<typeof SummarizeProgress>;

/**
 * A compaction summary of messages the agent chose (its own cut point): `messagesToSummarize`
 * become the history part, `turnPrefixMessages` (a split turn's beginning) the turn-context
 * part. Plugins see a `session_before_compact` event built from these fields. Both may be empty
 * (a short session, everything kept): that is an answer too, not an error — the plugins' summary,
 * else the previous summary carried over (`summarizer: "none"`), else "No prior history.".
 */
export const SummarizeCompaction = request(
  "summarize/compaction",
  () => z
    .object({
      messagesToSummarize: z.array(ContextMessage),
      turnPrefixMessages: z.array(ContextMessage).default([]),
      /** The previous compaction's summary: the new one updates it. */
      previousSummary: z.string().optional(),
      /** Files read and modified in the range (and carried from earlier compactions). Default: read from the messages' tool calls. */
      fileOps: FileOps.optional(),
      customInstructions: z.string().optional(),
      /** The agent's first kept entry, passed through to plugins (which echo it); `"none"` when absent. */
      firstKeptEntryId: z.string().min(1).optional(),
      /** The agent's context estimate before compaction, passed through to plugins. */
      tokensBefore: z.number().int().nonnegative().nullable().optional(),
      /** The agent's whole branch, for plugins that keep state in it (default: none). */
      branchEntries: z.array(SessionEntry).optional(),
      /** Overrides of the project's `compaction.*` settings (`reserveTokens` bounds the summary's length). */
      settings: CompactionSettings.partial().optional(),
      contextWindow: ContextWindow()
        .optional()
        .describe(
          "The agent model's window: a reserveTokens not set is capped at a quarter of it, which bounds the summary; " +
            "a reserve and kept part that cannot fit it are reported in message.",
        ),
      ...Origin,
    }),
  () => SummarizeResult,
);

/**
 * A branch summary of entries the agent is leaving (oldest first, as pi's tree navigation
 * collects them). Plugins see a `session_before_tree` event with `userWantsSummary: true`.
 */
export const SummarizeBranch = request(
  "summarize/branch",
  () => z.object({
    entries: z.array(SessionEntry).min(1),
    customInstructions: z.string().optional(),
    /** `customInstructions` replace the default prompt instead of being appended to it. */
    replaceInstructions: z.boolean().optional(),
    /**
     * The agent model's window: the summary reads up to `contextWindow − branchSummary.reserveTokens`
     * tokens (128,000 assumed when absent; a reserve left unset is capped at a quarter of the window).
     */
    contextWindow: z.number().int().positive().optional(),
    /** Passed through to plugins' `preparation`. */
    targetId: z.string().optional(),
    oldLeafId: z.string().nullable().optional(),
    commonAncestorId: z.string().nullable().optional(),
    label: z.string().optional(),
    ...Origin,
  }),
  () => SummarizeResult,
);
