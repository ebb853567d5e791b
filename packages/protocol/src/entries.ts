/**
 * Entry and message shapes (docs/design.md#data-model), following pi's session format so sessions
 * import and export losslessly. Unknown extra fields are kept (`.loose()`): a client or a
 * newer pi may add fields we do not know, and dropping them would lose data on export.
 */
import { z } from "zod";

/*
 * Every schema here is built when first used, not when the module loads: `z.lazy` makes its
 * schema on first parse (or when a union or the JSON Schema generator looks inside), once. A
 * daemon's start loads this module with the declarations that refer to it, and most starts parse
 * no entry before their first answers (docs/architecture.md#start-path-and-bundles). The schemas
 * still refer to each other by these exported constants, so the generated reference names them.
 */

/** Makes a value on first call, then returns the same one. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

export const TextContent = z.lazy(() => z.object({ type: z.literal("text"), text: z.string() }).loose());
export const ImageContent = z.lazy(() =>
  z
    .object({ type: z.literal("image"), data: z.string(), mimeType: z.string() })
    .loose(),
);
export const ThinkingContent = z.lazy(() =>
  z
    .object({ type: z.literal("thinking"), thinking: z.string() })
    .loose(),
);
export const ToolCall = z.lazy(() =>
  z
    .object({
      type: z.literal("toolCall"),
      id: z.string(),
      name: z.string(),
      arguments: z.record(z.string(), z.unknown()),
    })
    .loose(),
);

export const UserContentBlock = z.lazy(() => z.discriminatedUnion("type", [TextContent, ImageContent]));
export const AssistantContentBlock = z.lazy(() =>
  z.discriminatedUnion("type", [TextContent, ThinkingContent, ToolCall]),
);

export const Usage = z.lazy(() =>
  z
    .object({
      input: z.number().nonnegative().default(0),
      output: z.number().nonnegative().default(0),
      cacheRead: z.number().nonnegative().default(0),
      cacheWrite: z.number().nonnegative().default(0),
      totalTokens: z.number().nonnegative().optional(),
      cost: z.unknown().optional(),
    })
    .loose(),
);

export const StopReason = z.lazy(() => z.enum(["stop", "length", "toolUse", "error", "aborted"]));

/** Message timestamps are numbers (ms since epoch), as in pi. */
const messageTimestamp = () => z.number().optional();

export const UserMessage = z.lazy(() =>
  z
    .object({
      role: z.literal("user"),
      content: z.union([z.string(), z.array(UserContentBlock)]),
      timestamp: messageTimestamp(),
    })
    .loose(),
);

export const AssistantMessage = z.lazy(() =>
  z
    .object({
      role: z.literal("assistant"),
      content: z.array(AssistantContentBlock),
      provider: z.string().optional(),
      model: z.string().optional(),
      api: z.string().optional(),
      usage: Usage.optional(),
      stopReason: StopReason.optional(),
      errorMessage: z.string().optional(),
      timestamp: messageTimestamp(),
    })
    .loose(),
);

export const ToolResultMessage = z.lazy(() =>
  z
    .object({
      role: z.literal("toolResult"),
      toolCallId: z.string(),
      toolName: z.string(),
      content: z.array(UserContentBlock),
      isError: z.boolean().default(false),
      details: z.unknown().optional(),
      timestamp: messageTimestamp(),
    })
    .loose(),
);

export const BashExecutionMessage = z.lazy(() =>
  z
    .object({
      role: z.literal("bashExecution"),
      command: z.string(),
      output: z.string(),
      exitCode: z.number().nullable().optional(),
      cancelled: z.boolean().default(false),
      truncated: z.boolean().default(false),
      fullOutputPath: z.string().optional(),
      excludeFromContext: z.boolean().optional(),
      timestamp: messageTimestamp(),
    })
    .loose(),
);

export const CustomRoleMessage = z.lazy(() =>
  z
    .object({
      role: z.literal("custom"),
      customType: z.string(),
      content: z.union([z.string(), z.array(UserContentBlock)]),
      display: z.boolean().default(true),
      details: z.unknown().optional(),
      timestamp: messageTimestamp(),
    })
    .loose(),
);

export const AgentMessage = z.lazy(() =>
  z.discriminatedUnion("role", [
    UserMessage,
    AssistantMessage,
    ToolResultMessage,
    BashExecutionMessage,
    CustomRoleMessage,
  ]),
);

/** File operations tracked across summaries (cumulative). */
export const FileOpsDetails = z.lazy(() =>
  z
    .object({ readFiles: z.array(z.string()), modifiedFiles: z.array(z.string()) })
    .loose(),
);

/**
 * One tool result a `prune` entry hides: the context shows a one-line stub in its place, or, when
 * the output was cut to fit the model's window, its beginning and end around a one-line note (see
 * docs/compaction-rungs.md). The stored tool result itself never changes.
 */
export const PrunedOutput = z.lazy(() =>
  z
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
      excerpt: z
        .object({ head: z.string(), tail: z.string() })
        .optional()
        .describe(
          "Present when the output was cut to fit the window rather than hidden: the text kept from its beginning and its end, " +
            "shown around a note that says how much was left out.",
        ),
    })
    .loose(),
);

// ---- entries -------------------------------------------------------------------------------

/** Fields the daemon assigns; a client may supply them (e.g. on import) but usually does not. */
const entryBaseShape = once(() => ({
  id: z.string().min(1),
  parentId: z.string().min(1).nullable(),
  timestamp: z.string().min(1),
}));
export const EntryBase = z.lazy(() => z.object(entryBaseShape()));

/** Each entry type's own fields, shared by its stored and its appended form. */
const bodies = once(() => ({
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
}));

/** An appended entry's id and timestamp, which the daemon assigns when they are absent. */
const optionalBase = () => ({ id: entryBaseShape().id.optional(), timestamp: entryBaseShape().timestamp.optional() });

/** An entry as a client appends it: the body, optionally with id/parentId/timestamp. */
export const EntryInput = z.lazy(() =>
  z.discriminatedUnion("type", [
    bodies().message.extend(optionalBase()),
    bodies().custom_message.extend(optionalBase()),
    bodies().custom.extend(optionalBase()),
    bodies().model_change.extend(optionalBase()),
    bodies().thinking_level_change.extend(optionalBase()),
    bodies().label.extend(optionalBase()),
    bodies().session_info.extend(optionalBase()),
    bodies().compaction.extend(optionalBase()),
    bodies().branch_summary.extend(optionalBase()),
    bodies().prune.extend(optionalBase()),
  ]),
);

export const MessageEntry = z.lazy(() => bodies().message.extend(entryBaseShape()));
export const CustomMessageEntry = z.lazy(() => bodies().custom_message.extend(entryBaseShape()));
export const CustomEntry = z.lazy(() => bodies().custom.extend(entryBaseShape()));
export const ModelChangeEntry = z.lazy(() => bodies().model_change.extend(entryBaseShape()));
export const ThinkingLevelChangeEntry = z.lazy(() => bodies().thinking_level_change.extend(entryBaseShape()));
export const LabelEntry = z.lazy(() => bodies().label.extend(entryBaseShape()));
export const SessionInfoEntry = z.lazy(() => bodies().session_info.extend(entryBaseShape()));
export const CompactionEntry = z.lazy(() => bodies().compaction.extend(entryBaseShape()));
export const BranchSummaryEntry = z.lazy(() => bodies().branch_summary.extend(entryBaseShape()));
export const PruneEntry = z.lazy(() => bodies().prune.extend(entryBaseShape()));

export const SessionEntry = z.lazy(() =>
  z.discriminatedUnion("type", [
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
  ]),
);

export const EntryType = z.lazy(() =>
  z.enum([
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
  ]),
);

export const SessionHeader = z.lazy(() =>
  z
    .object({
      id: z.string().min(1),
      cwd: z.string(),
      createdAt: z.string(),
      parentSession: z.string().optional(),
      name: z.string().optional(),
    })
    .loose(),
);

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
