/**
 * A tiny builder of session paths for tests: each call appends an entry as the child of the
 * previous one, with a predictable id (`e1`, `e2`, …), timestamp and a given token count.
 */
import type {
  AssistantContentBlock,
  AssistantMessage,
  BashExecutionMessage,
  CompactionEntry,
  CompactionPreparation,
  SessionEntry,
  StopReason,
  ToolCall,
  ToolResultMessage,
  Usage,
  UserContentBlock,
} from "@base-context/protocol";
import type { CountedEntry } from "./types.js";

/** Entry bodies as tests write them: everything but id, parentId and timestamp. */
type EntryBody = SessionEntry extends infer E ? (E extends SessionEntry ? Omit<E, "id" | "parentId" | "timestamp"> : never) : never;

export interface AssistantSpec {
  text?: string;
  thinking?: string;
  toolCalls?: ToolCall[];
  usage?: Partial<Usage>;
  stopReason?: StopReason;
  provider?: string;
  model?: string;
}

export function toolCall(id: string, name: string, args: Record<string, unknown>): ToolCall {
  return { type: "toolCall", id, name, arguments: args };
}

/** An assistant message with some text (or none) and tool calls (`[id, name, args]`): finished when it calls none. */
export function sayMessage(text: string, calls: [id: string, name: string, args: Record<string, unknown>][] = []): AssistantMessage {
  return {
    role: "assistant",
    content: [...(text ? [{ type: "text" as const, text }] : []), ...calls.map(([id, name, args]) => toolCall(id, name, args))],
    stopReason: calls.length > 0 ? "toolUse" : "stop",
  };
}

/** An assistant message calling tools (`[id, name, args]`), as the retention tests write them. */
export function callMessage(...calls: [id: string, name: string, args: Record<string, unknown>][]): AssistantMessage {
  return { role: "assistant", content: calls.map(([id, name, args]) => toolCall(id, name, args)), stopReason: "toolUse" };
}

/** A tool's result with one text block. */
export function resultMessage(id: string, name: string, text: string, isError = false): ToolResultMessage {
  return { role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text }], isError };
}

export function usage(parts: Partial<Usage>): Usage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...parts };
}

export class PathBuilder {
  readonly path: CountedEntry[] = [];

  get lastId(): string {
    return this.path[this.path.length - 1]?.entry.id ?? "";
  }

  add(body: EntryBody, tokens = 0): string {
    const n = this.path.length + 1;
    const entry = {
      ...body,
      id: `e${n}`,
      parentId: this.path.length > 0 ? this.lastId : null,
      timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString(),
    } as SessionEntry;
    this.path.push({ entry, tokens });
    return entry.id;
  }

  user(content: string | UserContentBlock[], tokens = 0): string {
    return this.add({ type: "message", message: { role: "user", content } }, tokens);
  }

  assistant(spec: AssistantSpec, tokens = 0): string {
    const content: AssistantContentBlock[] = [];
    if (spec.thinking !== undefined) content.push({ type: "thinking", thinking: spec.thinking });
    if (spec.text !== undefined) content.push({ type: "text", text: spec.text });
    content.push(...(spec.toolCalls ?? []));
    const message: AssistantMessage = {
      role: "assistant",
      content,
      stopReason: spec.stopReason ?? (spec.toolCalls?.length ? "toolUse" : "stop"),
      ...(spec.usage ? { usage: usage(spec.usage) } : {}),
      ...(spec.provider ? { provider: spec.provider } : {}),
      ...(spec.model ? { model: spec.model } : {}),
    };
    return this.add({ type: "message", message }, tokens);
  }

  toolResult(toolCallId: string, text: string, tokens = 0, toolName = "bash", images: UserContentBlock[] = []): string {
    const content: UserContentBlock[] = [{ type: "text", text }, ...images];
    return this.add(
      { type: "message", message: { role: "toolResult", toolCallId, toolName, content, isError: false } },
      tokens,
    );
  }

  bash(spec: Partial<BashExecutionMessage> & { command: string }, tokens = 0): string {
    const message: BashExecutionMessage = { output: "", cancelled: false, truncated: false, ...spec, role: "bashExecution" };
    return this.add({ type: "message", message }, tokens);
  }

  compaction(spec: Omit<CompactionEntry, "type" | "id" | "parentId" | "timestamp">, tokens = 0): string {
    return this.add({ type: "compaction", ...spec }, tokens);
  }

  modelChange(provider: string, modelId: string): string {
    return this.add({ type: "model_change", provider, modelId });
  }

  thinkingLevel(thinkingLevel: string): string {
    return this.add({ type: "thinking_level_change", thinkingLevel });
  }

  /** Appends many plain user/assistant exchanges, `tokens` each message. */
  exchanges(count: number, tokens: number): void {
    for (let i = 0; i < count; i++) {
      this.user(`question ${i}`, tokens);
      this.assistant({ text: `answer ${i}` }, tokens);
    }
  }

  ids(): string[] {
    return this.path.map((item) => item.entry.id);
  }
}

/** A preparation of one user message to summarize, nothing kept: what `overrides` do not say. */
export function preparationOf(overrides: Partial<CompactionPreparation> = {}): CompactionPreparation {
  return {
    leafId: "leaf",
    firstKeptEntryId: "kept",
    messagesToSummarize: [{ role: "user", content: "history" }],
    summarizeEntryIds: ["h"],
    turnPrefixMessages: [],
    turnPrefixEntryIds: [],
    isSplitTurn: false,
    tokensBefore: 100,
    fileOps: { readFiles: [], modifiedFiles: [] },
    settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
    ...overrides,
  };
}
