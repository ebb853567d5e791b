/**
 * Context messages → the messages an LLM provider understands (pi's `convertToLlm`): bash runs,
 * custom messages and summaries become user messages; user, assistant and tool-result messages
 * pass through unchanged.
 */
import type { ContextMessage, UserContentBlock, UserMessage } from "@base-context/protocol";
import { bashExecutionText, branchSummaryText, compactionSummaryText } from "./llm-text.js";
import type { LlmMessage } from "./types.js";

function userText(text: string, timestamp: number | undefined): UserMessage {
  return { role: "user", content: [{ type: "text", text }], ...(timestamp !== undefined ? { timestamp } : {}) };
}

function userBlocks(content: string | UserContentBlock[], timestamp: number | undefined): UserMessage {
  const blocks: UserContentBlock[] = typeof content === "string" ? [{ type: "text", text: content }] : content;
  return { role: "user", content: blocks, ...(timestamp !== undefined ? { timestamp } : {}) };
}

export function convertToLlm(messages: readonly ContextMessage[]): LlmMessage[] {
  const converted: LlmMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
      case "assistant":
      case "toolResult":
        converted.push(message);
        break;
      case "bashExecution":
        if (message.excludeFromContext === true) break;
        converted.push(userText(bashExecutionText(message), message.timestamp));
        break;
      case "custom":
        converted.push(userBlocks(message.content, message.timestamp));
        break;
      case "compactionSummary":
        converted.push(userText(compactionSummaryText(message.summary), message.timestamp));
        break;
      case "branchSummary":
        converted.push(userText(branchSummaryText(message.summary), message.timestamp));
        break;
    }
  }
  return converted;
}

/** Another name for the same conversion, kept for callers that use it. */
export const toLlmMessages = convertToLlm;
