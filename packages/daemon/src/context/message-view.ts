/**
 * The messages of a built context as `base-context show` prints them and an editor shows them: a
 * label (role and what kind of message) and the text the LLM reads, with the token count the store
 * holds for the entry behind each message (what it counted of `messageContextText` when the entry
 * was appended), so the counts add up to the context's total. Pure: no tokenizer, no I/O.
 */
import type { ContextMessage, UserContentBlock } from "@base-context/protocol";
import { bashExecutionText, branchSummaryText, compactionSummaryText } from "@base-context/core";

export interface MessageView {
  /** `user`, `assistant`, `toolResult read`, `tool call_1`, … */
  label: string;
  /** What the LLM reads, ready to print. */
  text: string;
  tokens: number;
}

export function viewNativeMessage(message: ContextMessage, storedTokens: number): MessageView {
  return { label: nativeLabel(message), text: nativeText(message), tokens: storedTokens };
}

function nativeLabel(message: ContextMessage): string {
  switch (message.role) {
    case "toolResult":
      return `toolResult ${message.toolName}${message.isError ? " (error)" : ""}`;
    case "custom":
      return `custom ${message.customType}`;
    case "assistant":
      return message.stopReason === "error" || message.stopReason === "aborted" ? `assistant (${message.stopReason})` : "assistant";
    default:
      return message.role;
  }
}

function nativeText(message: ContextMessage): string {
  switch (message.role) {
    case "user":
    case "custom":
      return contentText(message.content);
    case "toolResult":
      return contentText(message.content);
    case "assistant":
      return message.content
        .map((block) => {
          if (block.type === "text") return block.text;
          if (block.type === "thinking") return `[thinking] ${block.thinking}`;
          return `→ ${block.name}(${JSON.stringify(block.arguments)})`;
        })
        .join("\n");
    case "bashExecution":
      return message.excludeFromContext === true ? "(excluded from the context)" : bashExecutionText(message);
    case "compactionSummary":
      return compactionSummaryText(message.summary);
    case "branchSummary":
      return branchSummaryText(message.summary);
  }
}

function contentText(content: string | readonly UserContentBlock[]): string {
  if (typeof content === "string") return content;
  return content.map((block) => (block.type === "text" ? block.text : imageLabel(block.mimeType, block.data.length))).join("\n");
}

function imageLabel(mimeType: string, base64Length: number): string {
  const kilobytes = Math.max(1, Math.round((base64Length * 3) / 4 / 1024));
  return `[image ${mimeType}, ${kilobytes} KB]`;
}

