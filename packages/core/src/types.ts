/**
 * Shapes shared by the pure core. The core never reads the store: callers hand it the entries of
 * a path together with the token count stored for each entry when it was appended.
 */
import type {
  AssistantMessage,
  ContextMessage,
  SessionEntry,
  ToolResultMessage,
  UserMessage,
} from "@base-context/protocol";

/** A path entry with the token count stored for it (0 for entries that are not in the context). */
export interface CountedEntry {
  readonly entry: SessionEntry;
  readonly tokens: number;
}

/** What an LLM provider understands: pi's `Message` (user, assistant, tool result). */
export type LlmMessage = UserMessage | AssistantMessage | ToolResultMessage;

export type { ContextMessage };
