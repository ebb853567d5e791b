/**
 * Claude Code's message content (the Anthropic Messages API's blocks) as the entries' content:
 * `text` and `image` blocks map one to one, `thinking` keeps its signature, `tool_use` becomes a
 * `toolCall`, and a `tool_result` block (carried in a `user` line) becomes a `toolResult` message.
 */
import type { AssistantContentBlock, AssistantMessage, ToolResultMessage, UserContentBlock, Usage } from "@base-context/protocol";
import { isJsonObject, type JsonObject } from "../json-line.js";

export const PROVIDER = "anthropic";
export const API = "anthropic-messages";

/** A user content block as stored (text or image), or undefined for a block that is neither. */
export function userBlock(block: JsonObject): UserContentBlock | undefined {
  if (block.type === "text" && typeof block.text === "string") return { type: "text", text: block.text };
  if (block.type === "image" && isJsonObject(block.source)) {
    const { data, media_type: mimeType } = block.source;
    if (typeof data === "string" && typeof mimeType === "string") return { type: "image", data, mimeType };
    return { type: "text", text: "[image]" };
  }
  return undefined;
}

/** The content of a tool result: a string, or blocks (text, image; other blocks as their JSON). */
export function toolResultContent(content: unknown): UserContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return content === undefined || content === null ? [] : [{ type: "text", text: JSON.stringify(content) }];
  const blocks: UserContentBlock[] = [];
  for (const block of content) {
    if (!isJsonObject(block)) continue;
    blocks.push(userBlock(block) ?? { type: "text", text: JSON.stringify(block) });
  }
  return blocks;
}

export function toolResultMessage(block: JsonObject, toolName: string, timestamp: number | undefined): ToolResultMessage {
  const message: ToolResultMessage = {
    role: "toolResult",
    toolCallId: typeof block.tool_use_id === "string" ? block.tool_use_id : "",
    toolName,
    content: toolResultContent(block.content),
    isError: block.is_error === true,
  };
  if (timestamp !== undefined) message.timestamp = timestamp;
  return message;
}

/** Assistant blocks; blocks of other kinds (server tool results…) are named in `dropped`. */
export function assistantBlocks(content: unknown, toolNames: Map<string, string>): { blocks: AssistantContentBlock[]; dropped: string[] } {
  const blocks: AssistantContentBlock[] = [];
  const dropped: string[] = [];
  if (typeof content === "string") return { blocks: content.length > 0 ? [{ type: "text", text: content }] : [], dropped };
  if (!Array.isArray(content)) return { blocks, dropped };
  for (const block of content) {
    if (!isJsonObject(block)) continue;
    if (block.type === "text" && typeof block.text === "string") blocks.push({ type: "text", text: block.text });
    else if (block.type === "thinking" && typeof block.thinking === "string") {
      blocks.push(
        typeof block.signature === "string" && block.signature.length > 0
          ? { type: "thinking", thinking: block.thinking, thinkingSignature: block.signature }
          : { type: "thinking", thinking: block.thinking },
      );
    } else if (block.type === "redacted_thinking") blocks.push({ type: "thinking", thinking: "", redacted: true });
    else if ((block.type === "tool_use" || block.type === "server_tool_use") && typeof block.id === "string" && typeof block.name === "string") {
      toolNames.set(block.id, block.name);
      const args = isJsonObject(block.input) ? block.input : block.input === undefined ? {} : { input: block.input };
      blocks.push({ type: "toolCall", id: block.id, name: block.name, arguments: args });
    } else dropped.push(typeof block.type === "string" ? block.type : "(untyped)");
  }
  return { blocks, dropped };
}

const STOP_REASONS: Readonly<Record<string, AssistantMessage["stopReason"]>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "toolUse",
  max_tokens: "length",
  refusal: "error",
  pause_turn: "stop",
};

export function stopReason(value: unknown): AssistantMessage["stopReason"] | undefined {
  return typeof value === "string" && Object.hasOwn(STOP_REASONS, value) ? STOP_REASONS[value] : undefined;
}

/** The Messages API's usage as pi's fields. */
export function usageOf(value: unknown): Usage | undefined {
  if (!isJsonObject(value)) return undefined;
  const count = (key: string) => (typeof value[key] === "number" && (value[key] as number) >= 0 ? (value[key] as number) : 0);
  const usage: Usage = {
    input: count("input_tokens"),
    output: count("output_tokens"),
    cacheRead: count("cache_read_input_tokens"),
    cacheWrite: count("cache_creation_input_tokens"),
  };
  usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  return usage;
}

/** The text of a message's content (a string, or its text blocks joined). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content) if (isJsonObject(block) && block.type === "text" && typeof block.text === "string") parts.push(block.text);
  return parts.join("\n");
}
