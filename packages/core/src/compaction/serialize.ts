/**
 * A conversation as plain text for the summarizer (docs/design.md#serialization). Labelled
 * lines rather than chat messages keep the model from continuing the conversation instead of
 * summarizing it.
 */
import { escapeWrapperClosingTags } from "../escape-tags.js";
import type { LlmMessage } from "../types.js";

/** Tool results are the bulk of a coding session; the start of each is enough for a summary. */
export const TOOL_RESULT_MAX_CHARS = 2000;

export function truncateToolResult(text: string, maxChars: number = TOOL_RESULT_MAX_CHARS): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n\n[... ${text.length - maxChars} more characters truncated]`;
}

function textOf(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.flatMap((block) => (block.type === "text" && block.text !== undefined ? [block.text] : [])).join("");
}

/** `name(key=<JSON value>, …)` */
function formatToolCall(name: string, args: Record<string, unknown>): string {
  const formatted = Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return `${name}(${formatted.join(", ")})`;
}

/**
 * `[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`, `[Assistant tool calls]: a(…); b(…)`,
 * `[Tool result]: …`, separated by blank lines. Messages without text are left out; images are
 * not described. Closing wrapper tags in the text are escaped (see escape-tags.ts), so the
 * result can be put between `<conversation>` tags safely. Convert context messages with
 * `convertToLlm` first.
 */
export function serializeConversation(messages: readonly LlmMessage[]): string {
  const parts: string[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      const text = textOf(message.content);
      if (text) parts.push(`[User]: ${text}`);
    } else if (message.role === "assistant") {
      const texts: string[] = [];
      const thoughts: string[] = [];
      const calls: string[] = [];
      for (const block of message.content) {
        if (block.type === "text") texts.push(block.text);
        else if (block.type === "thinking") thoughts.push(block.thinking);
        else calls.push(formatToolCall(block.name, block.arguments));
      }
      if (thoughts.length > 0) parts.push(`[Assistant thinking]: ${thoughts.join("\n")}`);
      if (texts.length > 0) parts.push(`[Assistant]: ${texts.join("\n")}`);
      if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
    } else {
      const text = textOf(message.content);
      if (text) parts.push(`[Tool result]: ${truncateToolResult(text)}`);
    }
  }
  return escapeWrapperClosingTags(parts.join("\n\n"));
}
