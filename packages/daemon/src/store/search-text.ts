/**
 * The words of an entry that full-text search indexes: what people and the model said (user and
 * assistant text, shell commands, custom messages), summaries, and session names. Tool results
 * and thinking are left out: they are mostly file contents and logs, would make the index several
 * times larger and every append slower, and would drown what was said in ranking.
 */
import type { SessionEntry } from "@base-context/protocol";

/** Longest text indexed per entry: enough to find any entry, bounded for huge pasted messages. */
export const SEARCH_TEXT_MAX_CHARS = 32_768;

/** Entry types that can have search text (`searchText`), as an SQL list (both engines' indexing). */
export const SEARCHABLE_TYPES = "('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')";

export function searchText(entry: SessionEntry): string | undefined {
  const text = rawText(entry);
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (trimmed.length === 0) return undefined;
  return trimmed.length > SEARCH_TEXT_MAX_CHARS ? trimmed.slice(0, SEARCH_TEXT_MAX_CHARS) : trimmed;
}

function rawText(entry: SessionEntry): string | undefined {
  switch (entry.type) {
    case "message": {
      const message = entry.message as { role: string; content?: unknown; command?: unknown };
      if (message.role === "user" || message.role === "assistant" || message.role === "custom") return blocksText(message.content);
      if (message.role === "bashExecution" && typeof message.command === "string") return message.command;
      return undefined;
    }
    case "custom_message":
      return blocksText(entry.content);
    case "compaction":
    case "branch_summary":
      return entry.summary;
    case "session_info":
      return typeof entry.name === "string" ? entry.name : undefined;
    default:
      return undefined;
  }
}

function blocksText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts: string[] = [];
  for (const block of content as { type?: unknown; text?: unknown }[]) {
    if (block?.type === "text" && typeof block.text === "string") parts.push(block.text);
  }
  return parts.join("\n");
}
