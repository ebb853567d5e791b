/**
 * The per-entry columns that make a context path cheap, each computed in O(1) from the parent's
 * when the entry is inserted: its depth, and the latest compaction / model / thinking-level entry
 * on its path (itself included). Pure: no SQL here.
 */
import type { SessionEntry } from "@base-context/protocol";

/** What a child needs from its parent (and what is stored for every entry). */
export interface PathColumns {
  id: string;
  depth: number;
  compactionId: string | null;
  modelChangeId: string | null;
  /** Latest entry that set the model as pi reads it: a model_change or an assistant message naming provider and model. */
  modelEntryId: string | null;
  thinkingChangeId: string | null;
}

export function pathColumnsFor(entry: SessionEntry, parent: PathColumns | null): PathColumns {
  const setsModel =
    entry.type === "model_change" ||
    (entry.type === "message" &&
      entry.message.role === "assistant" &&
      typeof entry.message.provider === "string" &&
      typeof entry.message.model === "string");
  return {
    id: entry.id,
    depth: parent ? parent.depth + 1 : 0,
    compactionId: entry.type === "compaction" ? entry.id : (parent?.compactionId ?? null),
    modelChangeId: entry.type === "model_change" ? entry.id : (parent?.modelChangeId ?? null),
    modelEntryId: setsModel ? entry.id : (parent?.modelEntryId ?? null),
    thinkingChangeId: entry.type === "thinking_level_change" ? entry.id : (parent?.thinkingChangeId ?? null),
  };
}

/** The message role of a `message` entry (stored so the first user message is found without parsing). */
export function messageRole(entry: SessionEntry): string | null {
  if (entry.type !== "message") return null;
  const role = (entry.message as { role?: unknown }).role;
  return typeof role === "string" ? role : null;
}

export const FIRST_MESSAGE_MAX_CHARS = 200;

/**
 * The text `session/list` shows for a session, from its first user message with text (as pi:
 * a string content, or the text blocks joined by spaces). Undefined when the entry has none.
 */
export function firstMessageText(entry: SessionEntry): string | undefined {
  if (entry.type !== "message" || entry.message.role !== "user") return undefined;
  const content: unknown = entry.message.content;
  let text = "";
  if (typeof content === "string") text = content;
  else if (Array.isArray(content)) {
    text = content
      .filter((block): block is { type: "text"; text: string } => block?.type === "text" && typeof block.text === "string")
      .map((block) => block.text)
      .join(" ");
  }
  text = text.trim();
  if (text.length === 0) return undefined;
  return text.length > FIRST_MESSAGE_MAX_CHARS ? `${text.slice(0, FIRST_MESSAGE_MAX_CHARS)}…` : text;
}

/** The name a `session_info` entry gives the session (pi: the latest non-empty one wins). */
export function sessionInfoName(entry: SessionEntry): string | undefined {
  if (entry.type !== "session_info" || typeof entry.name !== "string") return undefined;
  const name = entry.name.trim();
  return name.length > 0 ? name : undefined;
}

/** Timestamp of an entry in ms, or undefined when it does not parse. */
export function entryTimeMs(entry: SessionEntry): number | undefined {
  const ms = Date.parse(entry.timestamp);
  return Number.isNaN(ms) ? undefined : ms;
}
