/**
 * Context messages → OpenAI chat-completions messages, ready to send as is (docs/design.md#what-a-context-holds).
 * Follows pi's transform for OpenAI-compatible providers:
 * - assistant messages that ended in an error or were aborted are not replayed (incomplete turns);
 * - assistant text blocks become a string `content`, tool calls become `tool_calls` with
 *   JSON-string arguments, thinking is dropped, an assistant with neither is skipped;
 * - tool results become `role: "tool"` messages in order; images in tool results (which the
 *   `tool` role cannot carry) follow the run of results as one user message;
 * - a tool call left without a result when the conversation moves on gets a synthetic error
 *   result, because the API rejects unanswered tool calls.
 * Beyond pi: a tool result whose call is not in the preceding assistant message (e.g. the call
 * belonged to a dropped aborted reply) is left out, because the API rejects it too.
 */
import type { ContextMessage, OpenAIChatMessage, ToolCall, UserContentBlock } from "@base-context/protocol";
import { convertToLlm } from "./convert-to-llm.js";

type ContentPart = Record<string, unknown>;

const MISSING_TOOL_RESULT = "No result provided";
const IMAGE_ONLY_TOOL_RESULT = "(see attached image)";
const TOOL_RESULT_IMAGES_INTRO = "Attached image(s) from tool result:";

function imagePart(block: { data: string; mimeType: string }): ContentPart {
  return { type: "image_url", image_url: { url: `data:${block.mimeType};base64,${block.data}` } };
}

function userContent(content: string | UserContentBlock[]): string | ContentPart[] {
  if (typeof content === "string") return content;
  // One text block is sent as a plain string: the most widely accepted form, and lossless.
  const only = content.length === 1 ? content[0] : undefined;
  if (only?.type === "text") return only.text;
  return content.map((block) => (block.type === "text" ? { type: "text", text: block.text } : imagePart(block)));
}

export function toOpenAIChat(messages: readonly ContextMessage[]): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  // Tool calls of the last replayed assistant message that still wait for their results.
  let openCalls: ToolCall[] = [];
  const answered = new Set<string>();
  let pendingImages: ContentPart[] = [];

  /** The conversation moves on: answer what was left unanswered, then show tool images. */
  const closeToolRun = (): void => {
    for (const call of openCalls) {
      if (!answered.has(call.id)) out.push({ role: "tool", content: MISSING_TOOL_RESULT, tool_call_id: call.id });
    }
    openCalls = [];
    answered.clear();
    flushImages();
  };
  const flushImages = (): void => {
    if (pendingImages.length === 0) return;
    out.push({ role: "user", content: [{ type: "text", text: TOOL_RESULT_IMAGES_INTRO }, ...pendingImages] });
    pendingImages = [];
  };

  for (const message of convertToLlm(messages)) {
    if (message.role === "user") {
      closeToolRun();
      const content = userContent(message.content);
      if (content.length === 0) continue;
      out.push({ role: "user", content });
    } else if (message.role === "assistant") {
      closeToolRun();
      if (message.stopReason === "error" || message.stopReason === "aborted") continue;
      const text = message.content
        .flatMap((block) => (block.type === "text" && block.text.trim().length > 0 ? [block.text] : []))
        .join("");
      const calls = message.content.filter((block): block is ToolCall => block.type === "toolCall");
      if (text.length === 0 && calls.length === 0) continue;
      const chat: OpenAIChatMessage = { role: "assistant", content: text.length > 0 ? text : null };
      if (calls.length > 0) {
        chat.tool_calls = calls.map((call) => ({
          id: call.id,
          type: "function" as const,
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        }));
      }
      out.push(chat);
      openCalls = calls;
    } else {
      if (!openCalls.some((call) => call.id === message.toolCallId) || answered.has(message.toolCallId)) continue;
      answered.add(message.toolCallId);
      const text = message.content
        .flatMap((block) => (block.type === "text" ? [block.text] : []))
        .join("\n");
      out.push({ role: "tool", content: text.length > 0 ? text : IMAGE_ONLY_TOOL_RESULT, tool_call_id: message.toolCallId });
      for (const block of message.content) {
        if (block.type === "image") pendingImages.push(imagePart(block));
      }
    }
  }
  // A trailing unanswered call is left as is: the client may be running that tool right now.
  flushImages();
  return out;
}
