/**
 * Turns the lines of a Codex rollout file, one at a time, into a session header and entries
 * (docs/import-formats.md#codex-codex-jsonl). Each line is `{timestamp, type, payload}`; `session_meta` gives
 * the header, `response_item`s the messages and tool calls, `turn_context` model changes,
 * `compacted` Codex's own compactions. Codex sessions are linear: each entry's parent is the
 * previous one. Entry ids come from line numbers, so importing the same (append-only) file again
 * gives the same ids and only new lines add entries.
 */
import type { AgentMessage, AssistantMessage, SessionEntry, UserContentBlock } from "@base-context/protocol";
import { INJECTED_TEXT_TYPE, MAX_PARAMS_DEPTH, tooDeepAt } from "@base-context/core";
import type { LineParser, ParsedLine, ParseOutcome, SessionFileHeader } from "../format.js";
import { isJsonObject, readJsonLine, type JsonObject } from "../json-line.js";
import { latestPairs, SnapshotReader, stringValue } from "../snapshot.js";
import {
  callArguments,
  contentBlocks,
  blocksText,
  injectedKind,
  localShellArguments,
  messageText,
  reasoningBlocks,
  toolOutput,
} from "./items.js";


/** The API assistant messages name: what Codex spoke to its provider. */
const CODEX_API = "openai-responses";


/** Header fields with a place of their own; the rest of `session_meta` is kept as `extra.codex`. */
const HEADER_FIELDS = new Set(["id", "cwd", "timestamp"]);

/** What Codex puts before its model's summary when it hands the history on ("Another language model started…"). */
const SUMMARY_PREAMBLE = /^Another language model started to solve this problem[^\n]*\n/;

/** Tool names a snapshot keeps: the latest calls, which are those the lines after it answer (a turn's). */
const SNAPSHOT_TOOL_NAMES = 512;

/** Entry ids: from the line number, so a re-import of the same file names the same entries. */
export function codexEntryId(lineNumber: number, part?: number): string {
  return part === undefined ? `cx${lineNumber}` : `cx${lineNumber}.${part}`;
}

export class CodexLineParser implements LineParser {
  private header: SessionFileHeader | undefined;
  private previousId: string | null = null;
  private provider = "openai";
  private model: string | undefined;
  private effort: string | undefined;
  /** Tool names by call id, to name each result after its call. */
  private readonly toolNames = new Map<string, string>();
  /** The input tokens of Codex's latest model call (`token_count` events): a compaction's "before". */
  private lastContextTokens: number | null = null;

  constructor(from?: unknown) {
    if (from === undefined) return;
    const state = new SnapshotReader(from, "Codex parser");
    const header = state.optionalReader("header");
    this.header = header && {
      id: header.string("id"),
      createdAt: header.optionalString("createdAt"),
      cwd: header.optionalString("cwd"),
      parentSession: header.optionalString("parentSession"),
      extra: {},
    };
    this.previousId = state.stringOrNull("previousId");
    this.provider = state.string("provider");
    this.model = state.optionalString("model");
    this.effort = state.optionalString("effort");
    for (const [callId, name] of state.pairs("toolNames", stringValue)) this.toolNames.set(callId, name);
    this.lastContextTokens = state.optionalNumber("lastContextTokens") ?? null;
  }

  /** What it knows after the lines read so far (the header without what only the session row needs). */
  snapshot(): unknown {
    const { header } = this;
    return {
      header: header && {
        id: header.id,
        createdAt: header.createdAt ?? null,
        cwd: header.cwd ?? null,
        parentSession: header.parentSession ?? null,
      },
      previousId: this.previousId,
      provider: this.provider,
      model: this.model ?? null,
      effort: this.effort ?? null,
      toolNames: latestPairs(this.toolNames, SNAPSHOT_TOOL_NAMES),
      lastContextTokens: this.lastContextTokens,
    };
  }

  parse(text: string, lineNumber: number): ParseOutcome {
    const read = readJsonLine(text, lineNumber);
    if (read.kind !== "object") return read;
    const { value } = read;
    // Every later walk of an entry recurses per level: a line deeper than a request may nest would make the session unreadable.
    const deepAt = tooDeepAt(value, MAX_PARAMS_DEPTH);
    if (deepAt !== undefined) return { kind: "skip", reason: `nested deeper than ${MAX_PARAMS_DEPTH} levels (at ${deepAt || "the top"})` };
    if (typeof value.type !== "string") return { kind: "skip", reason: 'no "type" field: not a Codex rollout line' };
    if (!isJsonObject(value.payload)) return { kind: "skip", reason: `a "${value.type}" line without a payload object` };
    const { payload } = value;
    const timestamp = typeof value.timestamp === "string" ? value.timestamp : undefined;
    if (value.type === "session_meta") return this.sessionMeta(payload, timestamp);
    if (!this.header) return { kind: "skip", reason: `a "${value.type}" line before the session_meta line` };
    const at = new Stamp(timestamp ?? this.header.createdAt ?? new Date(0).toISOString());
    switch (value.type) {
      case "response_item":
        return this.responseItem(payload, lineNumber, at);
      case "turn_context":
        return this.turnContext(payload, lineNumber, at);
      case "compacted":
        return this.compacted(payload, lineNumber, at);
      case "event_msg":
        this.noteTokenCount(payload);
        return { kind: "ignored", what: "event_msg" };
      default:
        return { kind: "ignored", what: `line type "${value.type}"` };
    }
  }

  private sessionMeta(payload: JsonObject, timestamp: string | undefined): ParsedLine {
    // A forked session repeats its parent's session_meta after its own.
    if (this.header) return { kind: "ignored", what: "a further session_meta" };
    if (typeof payload.id !== "string" || payload.id.length === 0) return { kind: "skip", reason: "a session_meta line without an id" };
    const codex: JsonObject = {};
    for (const [key, field] of Object.entries(payload)) if (!HEADER_FIELDS.has(key)) codex[key] = field;
    if (typeof payload.model_provider === "string") this.provider = payload.model_provider;
    if (typeof payload.model === "string") this.model = payload.model;
    this.header = {
      id: payload.id,
      createdAt: typeof payload.timestamp === "string" ? payload.timestamp : timestamp,
      cwd: typeof payload.cwd === "string" ? payload.cwd : undefined,
      parentSession: typeof payload.forked_from_id === "string" ? payload.forked_from_id : undefined,
      extra: { importedFrom: "codex-jsonl", codex },
    };
    return { kind: "header", header: this.header };
  }

  private responseItem(payload: JsonObject, lineNumber: number, at: Stamp): ParseOutcome {
    const id = codexEntryId(lineNumber);
    switch (payload.type) {
      case "message":
        return this.message(payload, id, at);
      case "reasoning": {
        const content = reasoningBlocks(payload);
        if (content.length === 0) return { kind: "ignored", what: "empty reasoning" };
        return this.entries(this.messageEntry(id, at, this.assistant(content, "stop", at)));
      }
      case "function_call":
      case "custom_tool_call":
      case "local_shell_call":
        return this.toolCall(payload, id, at);
      case "function_call_output":
      case "custom_tool_call_output":
        return this.toolResult(payload, id, at);
      default:
        // web_search_call, a remote `compaction` (encrypted), ghost snapshots, newer types: kept, not in the context.
        if (typeof payload.type !== "string") return { kind: "skip", reason: "a response_item without a type" };
        return this.entries({ type: "custom", id, parentId: this.previousId, timestamp: at.iso, customType: `codex.${payload.type}`, data: payload });
    }
  }

  private message(payload: JsonObject, id: string, at: Stamp): ParsedLine {
    const role = payload.role;
    const blocks = contentBlocks(payload.content);
    if (blocks.length === 0) return { kind: "ignored", what: "empty message" };
    if (role === "assistant") {
      const content = blocks.filter((block) => block.type === "text");
      return this.entries(this.messageEntry(id, at, this.assistant(content, "stop", at)));
    }
    const kind = role === "user" ? injectedKind(payload, blocksText(blocks)) : String(role);
    if (kind === undefined) return this.entries(this.messageEntry(id, at, { role: "user", content: blocks, timestamp: at.ms }));
    return this.entries(injectedEntry(id, this.previousId, at, blocks, kind));
  }

  private toolCall(payload: JsonObject, id: string, at: Stamp): ParsedLine {
    const callId = typeof payload.call_id === "string" ? payload.call_id : typeof payload.id === "string" ? payload.id : undefined;
    if (callId === undefined) return { kind: "skip", reason: `a ${String(payload.type)} without a call_id` };
    let name: string;
    let args: Record<string, unknown>;
    if (payload.type === "local_shell_call") {
      name = "local_shell";
      args = localShellArguments(payload.action);
    } else {
      name = typeof payload.name === "string" ? payload.name : String(payload.type);
      args = payload.type === "custom_tool_call" ? { input: payload.input } : callArguments(payload.arguments);
    }
    this.toolNames.set(callId, name);
    const message = this.assistant([{ type: "toolCall", id: callId, name, arguments: args }], "toolUse", at);
    return this.entries(this.messageEntry(id, at, message));
  }

  private toolResult(payload: JsonObject, id: string, at: Stamp): ParsedLine {
    if (typeof payload.call_id !== "string") return { kind: "skip", reason: `a ${String(payload.type)} without a call_id` };
    const output = toolOutput(payload.output);
    return this.entries(
      this.messageEntry(id, at, {
        role: "toolResult",
        toolCallId: payload.call_id,
        toolName: this.toolNames.get(payload.call_id) ?? "unknown",
        content: output.content,
        isError: output.isError,
        ...(output.exitCode !== undefined ? { details: { exitCode: output.exitCode } } : {}),
        timestamp: at.ms,
      }),
    );
  }

  /** A model or reasoning effort other than the one in force; the same again is nothing to import. */
  private turnContext(payload: JsonObject, lineNumber: number, at: Stamp): ParseOutcome {
    const entries: SessionEntry[] = [];
    const model = typeof payload.model === "string" ? payload.model : undefined;
    if (model !== undefined && model !== this.model) {
      this.model = model;
      const id = codexEntryId(lineNumber);
      entries.push({ type: "model_change", id, parentId: this.previousId, timestamp: at.iso, provider: this.provider, modelId: model });
      this.previousId = id;
    }
    const effort = reasoningEffort(payload);
    if (effort !== undefined && effort !== this.effort) {
      this.effort = effort;
      const id = entries.length === 0 ? codexEntryId(lineNumber) : codexEntryId(lineNumber, 1);
      entries.push({ type: "thinking_level_change", id, parentId: this.previousId, timestamp: at.iso, thinkingLevel: effort });
      this.previousId = id;
    }
    return entries.length > 0 ? asOutcome(entries) : { kind: "ignored", what: "turn_context (nothing changed)" };
  }

  /**
   * Codex's compaction: its summary, and the history it continued from (`replacement_history`:
   * injected context and the user's recent messages, copied there by Codex). Entries: a marker,
   * those messages again (the user's as user messages, Codex's as injected text), then the
   * compaction, whose kept tail starts at the marker, so the context built here is the summary
   * and those messages, as Codex had it.
   */
  private compacted(payload: JsonObject, lineNumber: number, at: Stamp): ParseOutcome {
    if (typeof payload.message !== "string") return { kind: "skip", reason: "a compacted line without a summary message" };
    const message = payload.message;
    // Newer Codex stores its preamble for the next model with the summary; the summary is what follows it.
    const preamble = SUMMARY_PREAMBLE.exec(message)?.[0];
    const summary = preamble !== undefined ? message.slice(preamble.length) : message;
    const history = Array.isArray(payload.replacement_history) ? payload.replacement_history : [];
    const markerId = codexEntryId(lineNumber);
    const entries: SessionEntry[] = [];
    const push = (entry: SessionEntry) => {
      entries.push(entry);
      this.previousId = entry.id;
    };
    // The summary itself is in the history too (as a user message): it is the compaction's, not a kept message.
    const kept = history.filter(
      (item): item is JsonObject =>
        isJsonObject(item) && item.type === "message" && messageText(item) !== message && contentBlocks(item.content).length > 0,
    );
    push({
      type: "custom",
      id: markerId,
      parentId: this.previousId,
      timestamp: at.iso,
      customType: "codex.compacted",
      data: { replacementHistoryItems: history.length, keptMessages: kept.length },
    });
    kept.forEach((item, index) => {
      const blocks = contentBlocks(item.content);
      const id = codexEntryId(lineNumber, index + 1);
      const injected = item.role === "user" ? injectedKind(item, blocksText(blocks)) : String(item.role);
      if (injected !== undefined) push(injectedEntry(id, this.previousId, at, blocks, injected));
      else if (item.role === "user") push(this.messageEntry(id, at, { role: "user", content: blocks, timestamp: at.ms }));
    });
    push({
      type: "compaction",
      id: codexEntryId(lineNumber, kept.length + 1),
      parentId: this.previousId,
      timestamp: at.iso,
      summary,
      firstKeptEntryId: markerId,
      tokensBefore: this.lastContextTokens,
      details: { source: "codex", ...(preamble !== undefined ? { preamble } : {}) },
    });
    return asOutcome(entries);
  }

  private noteTokenCount(payload: JsonObject): void {
    if (payload.type !== "token_count" || !isJsonObject(payload.info) || !isJsonObject(payload.info.last_token_usage)) return;
    const input = payload.info.last_token_usage.input_tokens;
    if (typeof input === "number") this.lastContextTokens = input;
  }

  private assistant(content: AssistantMessage["content"], stopReason: "stop" | "toolUse", at: Stamp): AssistantMessage {
    return {
      role: "assistant",
      content,
      api: CODEX_API,
      provider: this.provider,
      ...(this.model !== undefined ? { model: this.model } : {}),
      stopReason,
      timestamp: at.ms,
    };
  }

  private messageEntry(id: string, at: Stamp, message: AgentMessage): SessionEntry {
    return { type: "message", id, parentId: this.previousId, timestamp: at.iso, message };
  }

  private entries(entry: SessionEntry): ParsedLine {
    this.previousId = entry.id;
    return { kind: "entry", entry };
  }
}

function asOutcome(entries: readonly SessionEntry[]): ParseOutcome {
  return entries.map((entry) => ({ kind: "entry", entry }) as const);
}

/** Text Codex put into the conversation (its instructions, the environment): kept, never the user's words. */
function injectedEntry(id: string, parentId: string | null, at: Stamp, content: UserContentBlock[], kind: string): SessionEntry {
  return {
    type: "custom_message",
    id,
    parentId,
    timestamp: at.iso,
    customType: INJECTED_TEXT_TYPE,
    content,
    display: false,
    details: { source: "codex", kind },
  };
}

/** Older Codex records `effort`; newer, the collaboration mode's `reasoning_effort`. */
function reasoningEffort(payload: JsonObject): string | undefined {
  if (typeof payload.effort === "string") return payload.effort;
  const mode = payload.collaboration_mode;
  const settings = isJsonObject(mode) ? mode.settings : undefined;
  return isJsonObject(settings) && typeof settings.reasoning_effort === "string" ? settings.reasoning_effort : undefined;
}

/** A line's time as an entry timestamp (ISO) and a message timestamp (ms). */
class Stamp {
  readonly ms: number | undefined;
  constructor(readonly iso: string) {
    const ms = Date.parse(iso);
    this.ms = Number.isNaN(ms) ? undefined : ms;
  }
}
