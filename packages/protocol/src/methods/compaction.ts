import { z } from "zod";
import { notification, request } from "../declare.js";
import { AssistantMessage, SessionEntry } from "../entries.js";
import { RequestId } from "./sessions.js";
import { ContextMessage } from "./context.js";

export const CompactionSettings = z.object({
  enabled: z.boolean(),
  reserveTokens: z.number().int().nonnegative(),
  keepRecentTokens: z.number().int().nonnegative(),
});

export const FileOps = z.object({ readFiles: z.array(z.string()), modifiedFiles: z.array(z.string()) });

/** What compaction will do, computed without side effects (PRODUCT.md §5). */
export const CompactionPreparation = z.object({
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
});

export type CompactionSettings = z.infer<typeof CompactionSettings>;
export type FileOps = z.infer<typeof FileOps>;
export type CompactionPreparation = z.infer<typeof CompactionPreparation>;

export const CompactionPrepare = request(
  "compaction/prepare",
  z.object({ sessionId: z.string().min(1), settings: CompactionSettings.partial().optional() }),
  z.union([
    z.object({ preparation: CompactionPreparation }),
    z.object({ nothing: z.string() }),
  ]),
);

export const CompactionReason = z.enum(["manual", "threshold", "overflow"]);
export const CompactionStatus = z.enum(["committed", "nothing_to_compact", "cancelled", "stale", "disabled"]);

export const CompactionResult = z.object({
  status: CompactionStatus,
  entry: SessionEntry.optional(),
  summarizer: z.string().optional(),
  message: z.string().optional(),
});

export const CompactionRun = request(
  "compaction/run",
  z.object({
    sessionId: z.string().min(1),
    customInstructions: z.string().optional(),
    reason: CompactionReason.default("manual"),
    requestId: RequestId.optional(),
    workDoneToken: z.union([z.string(), z.number()]).optional(),
  }),
  CompactionResult,
);

export const ToolBatch = z.object({ results: z.array(z.object({ terminate: z.boolean() })) });

export const TurnEnd = request(
  "turn/end",
  z.object({
    sessionId: z.string().min(1),
    contextWindow: z.number().int().positive(),
    assistant: AssistantMessage.optional(),
    toolBatch: ToolBatch.optional(),
    queuedInputs: z.number().int().nonnegative().optional(),
    requestId: RequestId.optional(),
  }),
  z.object({
    checkpoint: CompactionResult.optional(),
    followUp: z.enum(["none", "continue", "retry"]),
    message: z.string().optional(),
  }),
);

export const CompactionDidStart = notification(
  "compaction/didStart",
  z.object({ sessionId: z.string(), reason: CompactionReason }),
);
export const CompactionDidEnd = notification(
  "compaction/didEnd",
  z.object({ sessionId: z.string(), reason: CompactionReason, status: z.string(), entryId: z.string().optional() }),
);
