import { z } from "zod";
import { IdString, MAX_LABEL_CHARS, ProgressToken } from "../limits.js";
import { notification, request } from "../declare.js";
import { SessionEntry } from "../entries.js";
import { RetentionReport } from "./compaction.js";
import { RequestId } from "./sessions.js";

// Object and union schemas are `z.lazy`: built on first use, not when this module loads (see
// ../entries.ts, docs/architecture.md#start-path-and-bundles).

/**
 * - `moved`: the navigation happened (the leaf may still be the same entry when the target is a
 *   user message right under the old leaf: its text comes back as `editorText`);
 * - `unchanged`: the target is the current leaf, nothing was done;
 * - `cancelled`: a plugin's `session_before_tree` cancelled it, nothing was written;
 * - `stale`: the session's leaf moved while the summary was being written (another client or
 *   process appended or navigated); nothing was written, `leafId` is the leaf found then.
 * A `$/cancelRequest` is not a status: the reply is error -32800 and nothing is written.
 */
export const TreeNavigateStatus = z.enum(["moved", "unchanged", "cancelled", "stale"]);

/**
 * `$/progress` values of `tree/navigate` (when the request has a `workDoneToken`), shaped as
 * LSP's work-done progress: one `begin`, `report`s, one `end`.
 */
export const TreeNavigateProgress = z.lazy(() =>
  z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("begin"), title: z.string(), message: z.string().optional() }),
    z.object({ kind: z.literal("report"), message: z.string() }),
    z.object({ kind: z.literal("end"), message: z.string().optional() }),
  ]),
);
export type TreeNavigateProgress = z.infer<typeof TreeNavigateProgress>;

export const TreeNavigate = request(
  "tree/navigate",
  () => z.object({
    sessionId: IdString(),
    targetId: IdString(),
    summarize: z.boolean().default(false),
    customInstructions: z.string().optional(),
    replaceInstructions: z.boolean().optional(),
    label: z.string().min(1).max(MAX_LABEL_CHARS).optional(),
    /**
     * The agent model's window: the branch summary reads up to `contextWindow − branchSummary.reserveTokens`
     * tokens (128,000 assumed when absent; a reserve left unset is capped at a quarter of the window).
     */
    contextWindow: z.number().int().positive().optional(),
    requestId: RequestId.optional(),
    workDoneToken: ProgressToken().optional(),
  }),
  () => z.object({
    status: TreeNavigateStatus,
    /** The session's leaf afterwards: the summary entry, or the label entry written after it. */
    leafId: z.string().nullable(),
    summaryEntry: SessionEntry.optional(),
    /** What the branch summary kept of the branch (also `summaryEntry.details.retention`). */
    retention: RetentionReport.optional().describe(
      "What the branch summary kept of the branch it replaces (docs/retention.md); also summaryEntry.details.retention.",
    ),
    /** The target's text when it is a user or custom message (the client's input box gets it back). */
    editorText: z.string().optional(),
    /** Which plugin cancelled or wrote the summary, when one did. */
    pluginId: z.string().optional(),
    /** Why nothing was done (stale, cancelled), for people. */
    message: z.string().optional(),
  }),
);

export const TreeDidNavigate = notification(
  "tree/didNavigate",
  () => z.object({
    sessionId: z.string(),
    oldLeafId: z.string().nullable(),
    leafId: z.string().nullable(),
    targetId: z.string().optional(),
    summaryEntryId: z.string().optional(),
  }),
);
