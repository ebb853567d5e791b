/**
 * The messages of a built context as `base-context show` prints them: a label (role and what
 * kind of message), the text the LLM reads, and the tokens that text counts.
 *
 * Native messages carry the count the store holds for the entry behind them (what it counted of
 * `messageContextText` when the entry was appended), so their counts add up to the context's
 * total. OpenAI chat messages are counted on their own text (content, tool call names and arguments).
 */
import type { ContextMessage, OpenAIChatMessage, UserContentBlock } from "@base-context/protocol";
import { bashExecutionText, branchSummaryText, compactionSummaryText } from "@base-context/core";
import type { TokenCounter } from "../tokens/counter.js";
import { IMAGE_TOKENS } from "../tokens/index.js";

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

export async function viewOpenAIMessage(message: OpenAIChatMessage, counter: TokenCounter): Promise<MessageView> {
  const { text, counted, images } = openAIText(message);
  const tokens = (await counter.countTextAsync(counted)) + images * IMAGE_TOKENS;
  const label = message.role === "tool" && message.tool_call_id ? `tool ${message.tool_call_id}` : message.role;
  return { label, text, tokens };
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

/** The printed text, the counted text (what the model is sent), and the images in it. */
function openAIText(message: OpenAIChatMessage): { text: string; counted: string; images: number } {
  const shown: string[] = [];
  let counted = "";
  let images = 0;
  if (typeof message.content === "string") {
    shown.push(message.content);
    counted += message.content;
  } else if (Array.isArray(message.content)) {
    for (const part of message.content) {
      if (part.type === "text" && typeof part.text === "string") {
        shown.push(part.text);
        counted += part.text;
      } else {
        images++;
        shown.push("[image]");
      }
    }
  }
  for (const call of message.tool_calls ?? []) {
    shown.push(`→ ${call.function.name}(${call.function.arguments})  [${call.id}]`);
    counted += call.function.name + call.function.arguments;
  }
  return { text: shown.join("\n"), counted, images };
}
