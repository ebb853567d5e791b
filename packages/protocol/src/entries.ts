/**
 * Entry and message shapes (docs/design.md#data-model), following pi's session format so sessions
 * import and export losslessly. Unknown extra fields are kept (`.loose()`): a client or a
 * newer pi may add fields we do not know, and dropping them would lose data on export.
 */
import { z } from "zod";

export const TextContent = z.object({ type: z.literal("text"), text: z.string() }).loose();
export const ImageContent = z
  .object({ type: z.literal("image"), data: z.string(), mimeType: z.string() })
  .loose();
export const ThinkingContent = z
  .object({ type: z.literal("thinking"), thinking: z.string() })
  .loose();
export const ToolCall = z
  .object({
    type: z.literal("toolCall"),
    id: z.string(),
    name: z.string(),
    arguments: z.record(z.string(), z.unknown()),
  })
  .loose();

export const UserContentBlock = z.discriminatedUnion("type", [TextContent, ImageContent]);
export const AssistantContentBlock = z.discriminatedUnion("type", [TextContent, ThinkingContent, ToolCall]);

export const Usage = z
  .object({
    input: z.number().nonnegative().default(0),
    output: z.number().nonnegative().default(0),
    cacheRead: z.number().nonnegative().default(0),
    cacheWrite: z.number().nonnegative().default(0),
    totalTokens: z.number().nonnegative().optional(),
    cost: z.unknown().optional(),
  })
  .loose();

export const StopReason = z.enum(["stop", "length", "toolUse", "error", "aborted"]);

/** Message timestamps are numbers (ms since epoch), as in pi. */
const messageTimestamp = z.number().optional();

export const UserMessage = z
  .object({
    role: z.literal("user"),
    content: z.union([z.string(), z.array(UserContentBlock)]),
    timestamp: messageTimestamp,
  })
  .loose();

export const AssistantMessage = z
  .object({
    role: z.literal("assistant"),
    content: z.array(AssistantContentBlock),
    provider: z.string().optional(),
    model: z.string().optional(),
    api: z.string().optional(),
    usage: Usage.optional(),
    stopReason: StopReason.optional(),
    errorMessage: z.string().optional(),
    timestamp: messageTimestamp,
  })
  .loose();

export const ToolResultMessage = z
  .object({
    role: z.literal("toolResult"),
    toolCallId: z.string(),
    toolName: z.string(),
    content: z.array(UserContentBlock),
    isError: z.boolean().default(false),
    details: z.unknown().optional(),
    timestamp: messageTimestamp,
  })
  .loose();

export const BashExecutionMessage = z
  .object({
    role: z.literal("bashExecution"),
    command: z.string(),
    output: z.string(),
    exitCode: z.number().nullable().optional(),
    cancelled: z.boolean().default(false),
    truncated: z.boolean().default(false),
    fullOutputPath: z.string().optional(),
    excludeFromContext: z.boolean().optional(),
    timestamp: messageTimestamp,
  })
  .loose();

export const CustomRoleMessage = z
  .object({
    role: z.literal("custom"),
    customType: z.string(),
    content: z.union([z.string(), z.array(UserContentBlock)]),
    display: z.boolean().default(true),
    details: z.unknown().optional(),
    timestamp: messageTimestamp,
  })
  .loose();

export const AgentMessage = z.discriminatedUnion("role", [
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
  BashExecutionMessage,
  CustomRoleMessage,
]);

/** File operations tracked across summaries (cumulative). */
export const FileOpsDetails = z
  .object({ readFiles: z.array(z.string()), modifiedFiles: z.array(z.string()) })
  .loose();

/**
 * One tool result a `prune` entry hides: the context shows a one-line stub in its place (see
 * docs/compaction-rungs.md). The stored tool result itself never changes.
 */
export const PrunedOutput = z
  .object({
    /** The hidden tool result's entry. */
    entryId: z.string().min(1),
    toolName: z.string(),
    /** The call's arguments as the stub shows them (e.g. a path or a command). */
    args: z.string(),
    /** The stored token count of the full tool result. */
    tokens: z.number().int().nonnegative(),
    /** Token count of the stub that replaces it in the context. */
    stubTokens: z.number().int().nonnegative(),
  })
  .loose();

// ---- entries -------------------------------------------------------------------------------

/** Fields the daemon assigns; a client may supply them (e.g. on import) but usually does not. */
export const EntryBase = z.object({
  id: z.string().min(1),
  parentId: z.string().min(1).nullable(),
  timestamp: z.string().min(1),
});

const bodies = {
  message: z.object({ type: z.literal("message"), message: AgentMessage }).loose(),
  custom_message: z
    .object({
      type: z.literal("custom_message"),
      customType: z.string(),
      content: z.union([z.string(), z.array(UserContentBlock)]),
      details: z.unknown().optional(),
      display: z.boolean().default(true),
    })
    .loose(),
  custom: z.object({ type: z.literal("custom"), customType: z.string(), data: z.unknown().optional() }).loose(),
  model_change: z.object({ type: z.literal("model_change"), provider: z.string(), modelId: z.string() }).loose(),
  thinking_level_change: z
    .object({ type: z.literal("thinking_level_change"), thinkingLevel: z.string() })
    .loose(),
  label: z
    .object({ type: z.literal("label"), targetId: z.string(), label: z.string().optional() })
    .loose(),
  session_info: z.object({ type: z.literal("session_info"), name: z.string().optional() }).loose(),
  compaction: z
    .object({
      type: z.literal("compaction"),
      summary: z.string(),
      firstKeptEntryId: z.string(),
      tokensBefore: z.number().nullable(),
      fromHook: z.boolean().optional(),
      details: z.unknown().optional(),
      customInstructions: z.string().optional(),
    })
    .loose(),
  branch_summary: z
    .object({
      type: z.literal("branch_summary"),
      summary: z.string(),
      fromId: z.string(),
      fromHook: z.boolean().optional(),
      details: z.unknown().optional(),
    })
    .loose(),
  /**
   * Hides old tool output from the context (the cheap compaction rung): every tool result listed
   * is shown as a stub from here on, on this branch. In pi files it travels as a `custom` entry.
   */
  prune: z
    .object({
      type: z.literal("prune"),
      hidden: z.array(PrunedOutput).min(1),
      /** Σ (tokens − stubTokens) of `hidden`: what the context shrank by. */
      tokensSaved: z.number().int().nonnegative(),
    })
    .loose(),
} as const;

/** An entry as a client appends it: the body, optionally with id/parentId/timestamp. */
export const EntryInput = z.discriminatedUnion("type", [
  bodies.message.extend({ id: EntryBase.shape.id.optional(), timestamp: EntryBase.shape.timestamp.optional() }),
  bodies.custom_message.extend({ id: EntryBase.shape.id.optional(), timestamp: EntryBase.shape.timestamp.optional() }),
  bodies.custom.extend({ id: EntryBase.shape.id.optional(), timestamp: EntryBase.shape.timestamp.optional() }),
  bodies.model_change.extend({ id: EntryBase.shape.id.optional(), timestamp: EntryBase.shape.timestamp.optional() }),
  bodies.thinking_level_change.extend({ id: EntryBase.shape.id.optional(), timestamp: EntryBase.shape.timestamp.optional() }),
  bodies.label.extend({ id: EntryBase.shape.id.optional(), timestamp: EntryBase.shape.timestamp.optional() }),
  bodies.session_info.extend({ id: EntryBase.shape.id.optional(), timestamp: EntryBase.shape.timestamp.optional() }),
  bodies.compaction.extend({ id: EntryBase.shape.id.optional(), timestamp: EntryBase.shape.timestamp.optional() }),
  bodies.branch_summary.extend({ id: EntryBase.shape.id.optional(), timestamp: EntryBase.shape.timestamp.optional() }),
  bodies.prune.extend({ id: EntryBase.shape.id.optional(), timestamp: EntryBase.shape.timestamp.optional() }),
]);

export const MessageEntry = bodies.message.extend(EntryBase.shape);
export const CustomMessageEntry = bodies.custom_message.extend(EntryBase.shape);
export const CustomEntry = bodies.custom.extend(EntryBase.shape);
export const ModelChangeEntry = bodies.model_change.extend(EntryBase.shape);
export const ThinkingLevelChangeEntry = bodies.thinking_level_change.extend(EntryBase.shape);
export const LabelEntry = bodies.label.extend(EntryBase.shape);
export const SessionInfoEntry = bodies.session_info.extend(EntryBase.shape);
export const CompactionEntry = bodies.compaction.extend(EntryBase.shape);
export const BranchSummaryEntry = bodies.branch_summary.extend(EntryBase.shape);
export const PruneEntry = bodies.prune.extend(EntryBase.shape);

export const SessionEntry = z.discriminatedUnion("type", [
  MessageEntry,
  CustomMessageEntry,
  CustomEntry,
  ModelChangeEntry,
  ThinkingLevelChangeEntry,
  LabelEntry,
  SessionInfoEntry,
  CompactionEntry,
  BranchSummaryEntry,
  PruneEntry,
]);

export const EntryType = z.enum([
  "message",
  "custom_message",
  "custom",
  "model_change",
  "thinking_level_change",
  "label",
  "session_info",
  "compaction",
  "branch_summary",
  "prune",
]);

export const SessionHeader = z
  .object({
    id: z.string().min(1),
    cwd: z.string(),
    createdAt: z.string(),
    parentSession: z.string().optional(),
    name: z.string().optional(),
  })
  .loose();

export type TextContent = z.infer<typeof TextContent>;
export type ImageContent = z.infer<typeof ImageContent>;
export type ThinkingContent = z.infer<typeof ThinkingContent>;
export type ToolCall = z.infer<typeof ToolCall>;
export type UserContentBlock = z.infer<typeof UserContentBlock>;
export type AssistantContentBlock = z.infer<typeof AssistantContentBlock>;
export type Usage = z.infer<typeof Usage>;
export type StopReason = z.infer<typeof StopReason>;
export type UserMessage = z.infer<typeof UserMessage>;
export type AssistantMessage = z.infer<typeof AssistantMessage>;
export type ToolResultMessage = z.infer<typeof ToolResultMessage>;
export type BashExecutionMessage = z.infer<typeof BashExecutionMessage>;
export type CustomRoleMessage = z.infer<typeof CustomRoleMessage>;
export type AgentMessage = z.infer<typeof AgentMessage>;
export type FileOpsDetails = z.infer<typeof FileOpsDetails>;
export type EntryInput = z.infer<typeof EntryInput>;
export type MessageEntry = z.infer<typeof MessageEntry>;
export type CustomMessageEntry = z.infer<typeof CustomMessageEntry>;
export type CustomEntry = z.infer<typeof CustomEntry>;
export type ModelChangeEntry = z.infer<typeof ModelChangeEntry>;
export type ThinkingLevelChangeEntry = z.infer<typeof ThinkingLevelChangeEntry>;
export type LabelEntry = z.infer<typeof LabelEntry>;
export type SessionInfoEntry = z.infer<typeof SessionInfoEntry>;
export type CompactionEntry = z.infer<typeof CompactionEntry>;
export type BranchSummaryEntry = z.infer<typeof BranchSummaryEntry>;
export type PruneEntry = z.infer<typeof PruneEntry>;
export type PrunedOutput = z.infer<typeof PrunedOutput>;
export type SessionEntry = z.infer<typeof SessionEntry>;
export type EntryType = z.infer<typeof EntryType>;
export type SessionHeader = z.infer<typeof SessionHeader>;
