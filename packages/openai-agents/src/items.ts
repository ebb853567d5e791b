/**
 * Agents SDK items ↔ Base Context entries. Every stored message keeps the SDK items it was made
 * from (`agentsItems`, a field the daemon stores as is), so items come back exactly as they were
 * added; the message's own content is what the daemon counts, summarizes and searches.
 *
 * The items of one model response (reasoning, text, tool calls) become one assistant message, and
 * each tool output its own tool result: the daemon never cuts between an assistant message and the
 * tool results that follow it, so a compaction keeps every call with its output.
 */
import type { AgentInputItem, Usage as RunUsage } from "@openai/agents";
import type { AgentMessage, AssistantContentBlock, EntryInput } from "@base-context/protocol";

/** The field of a stored message that holds the SDK items it was made from. */
export const ITEMS_FIELD = "agentsItems";
/** `customType` of the messages made of items the daemon has no message role for. */
export const SYSTEM_TYPE = "openai-agents.system";
export const OTHER_TYPE = "openai-agents.item";

type Item = AgentInputItem;
type Loose = Record<string, unknown>;

/** Item types a model emits as part of its response: they join the response's assistant message. */
const RESPONSE_TYPES = new Set([
  "reasoning",
  "function_call",
  "hosted_tool_call",
  "computer_call",
  "shell_call",
  "apply_patch_call",
  "tool_search_call",
  "program_call",
]);
/** Item types that answer a call by its `callId`. */
const OUTPUT_TYPES = new Set([
  "function_call_result",
  "computer_call_result",
  "shell_call_output",
  "apply_patch_call_output",
  "tool_search_output",
  "program_call_result",
  "program_output",
]);

function kind(item: Item): "user" | "system" | "response" | "output" | "other" {
  const record = item as Loose;
  const type = record["type"] ?? "message";
  if (type === "message") {
    if (record["role"] === "assistant") return "response";
    if (record["role"] === "user") return "user";
    return "system";
  }
  if (RESPONSE_TYPES.has(String(type))) return "response";
  if (OUTPUT_TYPES.has(String(type)) && typeof record["callId"] === "string") return "output";
  return "other";
}

/** Items split into the runs that become one message each. */
export function groupItems(items: readonly Item[]): Item[][] {
  const groups: Item[][] = [];
  for (const item of items) {
    const last = groups.at(-1);
    if (last && kind(item) === "response" && kind(last[0]!) === "response") last.push(item);
    else groups.push([item]);
  }
  return groups;
}

function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(text).filter(Boolean).join("\n");
  if (value && typeof value === "object") {
    const part = value as Loose;
    for (const key of ["text", "refusal", "transcript"] as const) if (typeof part[key] === "string") return part[key] as string;
    if (part["type"] === "input_image" || part["type"] === "image") return "[image]";
    if (part["type"] === "input_file" || part["type"] === "file") return `[file${typeof part["filename"] === "string" ? ` ${part["filename"]}` : ""}]`;
    if (part["type"] === "audio" || part["type"] === "input_audio") return "[audio]";
  }
  return "";
}

function callArguments(raw: unknown): Record<string, unknown> {
  if (typeof raw !== "string") return raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Arguments a model wrote that are not JSON are kept as written.
  }
  return { input: raw };
}

function responseBlocks(item: Item): AssistantContentBlock[] {
  const record = item as Loose;
  switch (record["type"]) {
    case "message":
      return [{ type: "text", text: text(record["content"]) }];
    case "reasoning": {
      const thinking = text(record["content"]) || text(record["rawContent"]);
      return thinking ? [{ type: "thinking", thinking }] : [];
    }
    default: {
      const callId = record["callId"];
      const name = typeof record["name"] === "string" ? record["name"] : String(record["type"]);
      if (typeof callId === "string") {
        const args = record["type"] === "function_call" ? callArguments(record["arguments"]) : callArguments(record["action"] ?? record["arguments"]);
        return [{ type: "toolCall", id: callId, name, arguments: args }];
      }
      return [{ type: "text", text: `[${name}] ${JSON.stringify(record["arguments"] ?? record["action"] ?? record["output"] ?? "")}` }];
    }
  }
}

/** The entry that stores one group of items (see `groupItems`). */
export function groupToEntry(group: readonly Item[]): EntryInput {
  const items = structuredClone(group) as Item[];
  const first = items[0] as Loose;
  let message: AgentMessage & Loose;
  switch (kind(items[0]!)) {
    case "user":
      message = { role: "user", content: text(first["content"]) };
      break;
    case "response": {
      const content = items.flatMap(responseBlocks);
      const calls = content.some((block) => block.type === "toolCall");
      message = { role: "assistant", content, stopReason: calls ? "toolUse" : "stop" };
      break;
    }
    case "output":
      message = {
        role: "toolResult",
        toolCallId: first["callId"] as string,
        toolName: typeof first["name"] === "string" ? first["name"] : String(first["type"]),
        content: [{ type: "text", text: text(first["output"]) || JSON.stringify(first["output"] ?? "") }],
        isError: first["status"] === "incomplete",
      };
      break;
    case "system":
      message = { role: "custom", customType: SYSTEM_TYPE, content: text(first["content"]), display: false };
      break;
    default:
      message = { role: "custom", customType: OTHER_TYPE, content: JSON.stringify(first), display: false };
  }
  message[ITEMS_FIELD] = items;
  return { type: "message", message } as EntryInput;
}

/** The stored items of a message, when a client of this package stored it. */
export function storedItems(message: unknown): Item[] | undefined {
  const items = (message as Loose | undefined)?.[ITEMS_FIELD];
  return Array.isArray(items) ? (structuredClone(items) as Item[]) : undefined;
}

const userItem = (content: string): Item => ({ role: "user", content }) as Item;

/**
 * SDK items for a message another client stored (pi, an import, the CLI): the nearest SDK shapes
 * of what the model would read.
 */
export function itemsOfMessage(message: Loose): Item[] {
  switch (message["role"]) {
    case "user":
      return [userItem(text(message["content"]))];
    case "assistant": {
      const items: Item[] = [];
      for (const block of (message["content"] as Loose[] | undefined) ?? []) {
        if (block["type"] === "text") {
          items.push({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: block["text"] }] } as Item);
        } else if (block["type"] === "toolCall") {
          items.push({ type: "function_call", callId: block["id"], name: block["name"], arguments: JSON.stringify(block["arguments"] ?? {}) } as Item);
        } else if (block["type"] === "thinking") {
          items.push({ type: "reasoning", content: [{ type: "input_text", text: block["thinking"] }] } as Item);
        }
      }
      return items;
    }
    case "toolResult":
      return [
        {
          type: "function_call_result",
          callId: message["toolCallId"],
          name: message["toolName"],
          status: "completed",
          output: text(message["content"]),
        } as Item,
      ];
    default:
      return [userItem(text(message["content"]) || text(message["output"]))];
  }
}

/** A tool output as the context shows it once pruned: the stub in place of the output. */
export function withPrunedOutput(item: Item, stub: string): Item {
  const record = item as Loose;
  // Other outputs (screenshots, shell runs) have shapes of their own: the daemon only prunes tool results it can stub.
  return record["type"] === "function_call_result" ? ({ ...record, output: stub } as Item) : item;
}

/**
 * The entries with the run's last request's usage on its response, when the run reported usage
 * for every request and these entries hold all of its responses (then the last one is the last
 * request's answer; anything else could pair a response with another request's count).
 */
export function withUsage(entries: EntryInput[], usage: RunUsage | undefined): EntryInput[] {
  const requests = usage?.requestUsageEntries?.filter((entry) => entry.endpoint === undefined || entry.endpoint === "responses.create");
  const responses = entries.filter((entry) => entry.type === "message" && entry.message.role === "assistant");
  const last = requests?.at(-1);
  if (!usage || !last || requests!.length !== usage.requests || responses.length !== requests!.length) return entries;
  if (!(last.inputTokens > 0)) return entries;
  const reply = responses.at(-1)!;
  return entries.map((entry) =>
    entry === reply && entry.type === "message"
      ? ({
          ...entry,
          message: {
            ...entry.message,
            usage: {
              input: last.inputTokens,
              output: last.outputTokens,
              cacheRead: 0,
              cacheWrite: 0,
              totalTokens: last.inputTokens + last.outputTokens,
            },
          },
        } as EntryInput)
      : entry,
  );
}
