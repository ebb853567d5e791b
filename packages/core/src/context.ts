/**
 * Context building (docs/design.md#what-a-context-holds): the path of a session → the native messages the LLM sees,
 * plus the model and thinking level in force and the token count of what the context holds.
 */
import type {
  ContextMessage,
  MessageEntry,
  ModelChangeEntry,
  SessionEntry,
  ThinkingLevelChangeEntry,
} from "@base-context/protocol";
import { selectContextEntries, selectionTokens } from "./context-selection.js";
import { compactionSummaryMessage, entryToContextMessage } from "./entry-messages.js";
import { isToolResultEntry, prunedOutputs, prunedToolResult, withPrunedCounts } from "./prune.js";
import type { CountedEntry } from "./types.js";

export interface BuildContextInput {
  /**
   * Path entries root → leaf, or a suffix of the path that starts at or before the latest
   * compaction's firstKeptEntryId (all the context needs).
   */
  readonly path: readonly CountedEntry[];
  /** The latest model_change on the whole path, in case it lies before the given suffix. */
  readonly latestModelChange?: ModelChangeEntry;
  /**
   * The latest entry on the whole path that set the model as pi reads it (a model_change or an
   * assistant message naming provider and model). Preferred over `latestModelChange`: a reply
   * by another model after the last model_change decides the model.
   */
  readonly latestModelEntry?: ModelChangeEntry | MessageEntry;
  /** The latest thinking_level_change on the whole path, in case it lies before the suffix. */
  readonly latestThinkingLevelChange?: ThinkingLevelChangeEntry;
}

export interface ModelRef {
  provider: string;
  modelId: string;
}

export interface BuiltContext {
  messages: ContextMessage[];
  /** Ids of the entries behind `messages`, same order (the compaction's id for its summary). */
  entryIds: string[];
  /** The stored token count behind each message, same order (a hidden output's is its stub's); they add up to `tokens`. */
  messageTokens: number[];
  model?: ModelRef;
  thinkingLevel: string;
  /** The compaction whose summary opens the context. */
  compactionId?: string;
  /** Sum of the stored token counts of what the context holds (a hidden output counts its stub). */
  tokens: number;
  /** Ids of the tool results shown as a stub, because a prune entry on the path hides them. */
  prunedEntryIds: string[];
  /** Their tool call ids, same order (how a client finds them among the messages). */
  prunedToolCallIds: string[];
  /** What the stubs save against the full outputs. */
  prunedTokens: number;
}

/**
 * The model in force: the latest model_change or assistant reply (an assistant message records
 * the model that actually answered, as pi does). Metadata before a suffix comes from the input.
 * The same rule `buildContext` reports `model` with, without building the messages.
 */
export function modelInForce(input: Pick<BuildContextInput, "path" | "latestModelChange" | "latestModelEntry">): ModelRef | undefined {
  let model = modelSetBy(input.latestModelEntry) ?? modelSetBy(input.latestModelChange);
  for (const { entry } of input.path) model = modelSetBy(entry) ?? model;
  return model;
}

/** The model an entry sets, if it sets one. */
function modelSetBy(entry: SessionEntry | undefined): ModelRef | undefined {
  if (entry?.type === "model_change") return { provider: entry.provider, modelId: entry.modelId };
  if (entry?.type === "message" && entry.message.role === "assistant") {
    const { provider, model: modelId } = entry.message;
    if (provider && modelId) return { provider, modelId };
  }
  return undefined;
}

function thinkingLevelInForce(input: BuildContextInput): string {
  let level = input.latestThinkingLevelChange?.thinkingLevel ?? "off";
  for (const { entry } of input.path) {
    if (entry.type === "thinking_level_change") level = entry.thinkingLevel;
  }
  return level;
}

export function buildContext(input: BuildContextInput): BuiltContext {
  const hidden = prunedOutputs(input.path);
  const selection = selectContextEntries(withPrunedCounts(input.path, hidden));
  // What a stub saves is measured on the stored count, not on what the prune entry claims.
  const storedTokens = hidden.size > 0 ? new Map(input.path.map((item) => [item.entry.id, item.tokens])) : undefined;
  const messages: ContextMessage[] = [];
  const entryIds: string[] = [];
  const messageTokens: number[] = [];
  const prunedEntryIds: string[] = [];
  const prunedToolCallIds: string[] = [];
  let prunedTokens = 0;

  if (selection.compaction) {
    messages.push(compactionSummaryMessage(selection.compaction.entry));
    entryIds.push(selection.compaction.entry.id);
    messageTokens.push(selection.compaction.tokens);
  }
  for (const item of [...selection.keptBeforeCompaction, ...selection.afterCompaction]) {
    const pruned = hidden.size > 0 && isToolResultEntry(item.entry) ? hidden.get(item.entry.id) : undefined;
    if (pruned && isToolResultEntry(item.entry)) {
      messages.push(prunedToolResult(item.entry.message, pruned));
      entryIds.push(item.entry.id);
      messageTokens.push(item.tokens);
      prunedEntryIds.push(item.entry.id);
      prunedToolCallIds.push(item.entry.message.toolCallId);
      prunedTokens += Math.max(0, (storedTokens?.get(item.entry.id) ?? 0) - item.tokens);
      continue;
    }
    const message = entryToContextMessage(item.entry);
    if (!message) continue;
    messages.push(message);
    entryIds.push(item.entry.id);
    messageTokens.push(item.tokens);
  }

  const model = modelInForce(input);
  return {
    messages,
    entryIds,
    messageTokens,
    ...(model ? { model } : {}),
    thinkingLevel: thinkingLevelInForce(input),
    ...(selection.compaction ? { compactionId: selection.compaction.entry.id } : {}),
    tokens: selectionTokens(selection),
    prunedEntryIds,
    prunedToolCallIds,
    prunedTokens,
  };
}
