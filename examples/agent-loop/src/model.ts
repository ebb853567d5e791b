/**
 * The model side of the loop: the daemon's `openai-chat` context → an OpenAI chat-completions
 * request, and the completion (or the error) → an assistant message in the shape the daemon
 * stores (pi's: content blocks, `usage`, `stopReason`, `errorMessage`, `provider`, `model`).
 *
 * A failed call is not thrown: it becomes an assistant message with `stopReason: "error"` and
 * the provider's text in `errorMessage`, which is how `turn/end` recognizes a context overflow.
 */
import type OpenAI from "openai";
import { APIUserAbortError } from "openai";
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { OpenAIChatMessage, type AssistantContentBlock, type AssistantMessage, type Usage } from "@base-context/protocol";
import type { Tool } from "./tools.js";

/** Tool call argument text that was not a JSON object is kept here, and the call answered with an error. */
export const INVALID_ARGUMENTS = "invalidArguments";

export interface ModelCall {
  readonly openai: OpenAI;
  readonly model: string;
  /** Stored as the reply's `provider`; keep it (and `model`) the same for the whole session. */
  readonly provider: string;
  readonly messages: ChatCompletionMessageParam[];
  readonly tools: readonly Tool[];
  readonly signal?: AbortSignal | undefined;
}

/** The `messages` of a `context/build { format: "openai-chat" }` result, with the system prompt first. */
export function chatRequestMessages(systemPrompt: string, context: readonly unknown[]): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [{ role: "system", content: systemPrompt }];
  for (const message of OpenAIChatMessage.array().parse(context)) messages.push(toParam(message));
  return messages;
}

function toParam(message: OpenAIChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
      return { role: "system", content: textOf(message.content) };
    case "user":
      return { role: "user", content: typeof message.content === "string" ? message.content : (message.content ?? []).map(userPart) };
    case "assistant":
      return {
        role: "assistant",
        content: message.content === null ? null : textOf(message.content),
        ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}),
      };
    case "tool":
      if (message.tool_call_id === undefined) throw new Error("a tool message of the context has no tool_call_id");
      return { role: "tool", tool_call_id: message.tool_call_id, content: textOf(message.content) };
  }
}

function textOf(content: OpenAIChatMessage["content"]): string {
  if (typeof content === "string") return content;
  return (content ?? []).map((part) => (typeof part["text"] === "string" ? part["text"] : "")).join("");
}

function userPart(part: Record<string, unknown>): ChatCompletionContentPart {
  if (part["type"] === "text" && typeof part["text"] === "string") return { type: "text", text: part["text"] };
  const image = part["image_url"];
  if (part["type"] === "image_url" && typeof image === "object" && image !== null && "url" in image && typeof image.url === "string") {
    return { type: "image_url", image_url: { url: image.url } };
  }
  throw new Error(`unsupported content part in the context: ${JSON.stringify(part).slice(0, 100)}`);
}

export function toolDefinitions(tools: readonly Tool[]): ChatCompletionTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

/** One chat-completions call; never throws for a failed call (see the file comment). */
export async function callModel(call: ModelCall): Promise<AssistantMessage> {
  // Set when the request starts: the daemon compares it with compaction times (stale usage).
  const base = { role: "assistant", api: "openai-completions", provider: call.provider, model: call.model, timestamp: Date.now() } as const;
  try {
    const completion = await call.openai.chat.completions.create(
      {
        model: call.model,
        messages: call.messages,
        ...(call.tools.length > 0 ? { tools: toolDefinitions(call.tools) } : {}),
      },
      { signal: call.signal },
    );
    const choice = completion.choices[0];
    if (!choice) return { ...base, content: [], stopReason: "error", errorMessage: "the model answered without a choice" };
    const content: AssistantContentBlock[] = [];
    if (choice.message.content) content.push({ type: "text", text: choice.message.content });
    for (const toolCall of choice.message.tool_calls ?? []) {
      if (toolCall.type !== "function") continue;
      content.push({ type: "toolCall", id: toolCall.id, name: toolCall.function.name, ...parseArguments(toolCall.function.arguments) });
    }
    const usage = toUsage(completion.usage);
    const message: AssistantMessage = {
      ...base,
      content,
      stopReason: stopReasonOf(choice.finish_reason, content),
      ...(usage ? { usage } : {}),
    };
    if (choice.finish_reason === "content_filter") message.errorMessage = "the provider's content filter stopped the reply";
    return message;
  } catch (error) {
    if (error instanceof APIUserAbortError || call.signal?.aborted)
      return { ...base, content: [], stopReason: "aborted", errorMessage: "aborted" };
    // The SDK's message carries the HTTP status and the provider's text, e.g.
    // "400 This model's maximum context length is 8192 tokens. However, …".
    return { ...base, content: [], stopReason: "error", errorMessage: error instanceof Error ? error.message : String(error) };
  }
}

function parseArguments(text: string): { arguments: Record<string, unknown>; [INVALID_ARGUMENTS]?: string } {
  try {
    const value: unknown = JSON.parse(text.trim() === "" ? "{}" : text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return { arguments: value as Record<string, unknown> };
  } catch {
    // reported below
  }
  return { arguments: {}, [INVALID_ARGUMENTS]: text };
}

function stopReasonOf(finishReason: string, content: readonly AssistantContentBlock[]): AssistantMessage["stopReason"] {
  // Some servers answer tool calls with finish_reason "stop": the calls decide.
  if (content.some((block) => block.type === "toolCall")) return "toolUse";
  if (finishReason === "length") return "length";
  if (finishReason === "content_filter") return "error";
  return "stop";
}

/** OpenAI usage → pi's: cached prompt tokens are reported apart from the rest of the input. */
function toUsage(usage: OpenAI.CompletionUsage | undefined): Usage | undefined {
  if (!usage) return undefined;
  const cacheRead = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input: Math.max(0, usage.prompt_tokens - cacheRead),
    output: usage.completion_tokens,
    cacheRead,
    cacheWrite: 0,
    totalTokens: usage.total_tokens,
  };
}
