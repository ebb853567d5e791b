/**
 * Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`), one line at a time,
 * as entries (docs/import-formats.md says how each line type maps). Entry ids are the lines' own
 * `uuid`s (a line that becomes several entries: `<uuid>`, `<uuid>.1`, …), so a re-import
 * recognises what it stored before. Lines that are not conversation (`progress`,
 * `file-history-snapshot`, `queue-operation`…) are counted, not stored; a child of such a line
 * hangs under that line's nearest stored ancestor, so they leave no gaps and no false branches.
 */
import type { AgentMessage, SessionEntry, UserContentBlock } from "@base-context/protocol";
import { INJECTED_TEXT_TYPE, MAX_PARAMS_DEPTH, tooDeepAt } from "@base-context/core";
import type { IdSource } from "../../../ids.js";
import type { LineParser, ParsedLine, ParseOutcome } from "../format.js";
import { isJsonObject, readJsonLine, type JsonObject } from "../json-line.js";
import { API, assistantBlocks, PROVIDER, stopReason, textOf, toolResultMessage, usageOf, userBlock } from "./content.js";
import { latestPairs, SnapshotError, SnapshotReader, stringOrNullValue, stringValue } from "../snapshot.js";
import { attachmentText } from "./attachments.js";
import { injectedKind, splitReminders, type InjectedKind } from "./injected.js";
import { QueuedMessages } from "./queued-messages.js";
import { TurnOrder } from "./turn-order.js";

/** Line types that hold no conversation: skipped and counted. */
const METADATA_TYPES = new Set(["progress", "file-history-snapshot", "queue-operation"]);
/** `system` subtypes that are bookkeeping only (the rest are kept as custom entries). */
const METADATA_SUBTYPES = new Set(["turn_duration"]);
/** Fields every conversation line carries: not part of what a kept system or unknown line says. */
const ENVELOPE = new Set(["parentUuid", "logicalParentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "slug", "type", "uuid", "timestamp", "agentId"]);
const MISSING_SUMMARY = "(Claude Code's compaction summary is missing from the file)";

/** A part of a user line that becomes one entry. */
type UserPart =
  | { kind: "user"; content: string | UserContentBlock[] }
  | { kind: "injected"; injected: InjectedKind; text: string }
  | { kind: "toolResult"; block: JsonObject };

export class ClaudeCodeLineParser implements LineParser {
  private headerDone = false;
  private sessionId = "";
  private title: string | undefined;
  /** Title lines so far: a later title's entry id is its number in the file, the same at every import. */
  private titleLines = 0;
  /** uuid of a line stored under another id, or not stored → the id its children hang under (null: a root). */
  private readonly aliases = new Map<string, string | null>();
  private readonly toolNames = new Map<string, string>();
  private pendingBoundary: { line: JsonObject; lineNumber: number } | undefined;
  private mainLeaf: string | undefined;
  /** A subagent's own file (`<session>/subagents/agent-*.jsonl`): every line is a side chain. */
  private subagentFile = false;
  /** The latest entries of the main chain (0) and of side chains (1), to put parallel tool results in line. */
  private readonly chains = [new RecentChain(), new RecentChain()];
  /** User lines held for the attachments written after them, which the model reads first. */
  private readonly order = new TurnOrder();
  /** Messages the user typed while the agent worked (`queue-operation` lines), until they are given to the model. */
  private readonly queue = new QueuedMessages();

  constructor(
    private readonly ids: Pick<IdSource, "now">,
    from?: unknown,
  ) {
    if (from !== undefined) this.restore(new SnapshotReader(from, "Claude Code parser"));
  }

  /** What it knows after the lines read so far; bounded (the latest aliases and tool names). */
  snapshot(): unknown {
    return {
      headerDone: this.headerDone,
      sessionId: this.sessionId,
      title: this.title ?? null,
      titleLines: this.titleLines,
      aliases: latestPairs(this.aliases, SNAPSHOT_PAIRS),
      toolNames: latestPairs(this.toolNames, SNAPSHOT_PAIRS),
      pendingBoundary: this.pendingBoundary ?? null,
      mainLeaf: this.mainLeaf ?? null,
      subagentFile: this.subagentFile,
      chains: this.chains.map((chain) => chain.snapshot()),
      order: this.order.snapshot(),
      queue: this.queue.snapshot(),
    };
  }

  private restore(state: SnapshotReader): void {
    this.headerDone = state.boolean("headerDone");
    this.sessionId = state.string("sessionId");
    this.title = state.optionalString("title");
    this.titleLines = state.number("titleLines");
    for (const [key, value] of state.pairs("aliases", stringOrNullValue)) this.aliases.set(key, value);
    for (const [key, value] of state.pairs("toolNames", stringValue)) this.toolNames.set(key, value);
    if (state.list("chains").length !== this.chains.length) throw new SnapshotError("chains: not two");
    state.list("chains").forEach((chain, index) => this.chains[index]!.restore(new SnapshotReader(chain, "chain")));
    const pending = state.optionalReader("pendingBoundary");
    this.pendingBoundary = pending && { line: pending.object("line"), lineNumber: pending.number("lineNumber") };
    this.mainLeaf = state.optionalString("mainLeaf");
    this.subagentFile = state.boolean("subagentFile");
    this.order.restore(state.reader("order"));
    this.queue.restore(state.reader("queue"));
  }

  parse(text: string, lineNumber: number): ParseOutcome {
    const read = readJsonLine(text, lineNumber, "uuid");
    if (read.kind !== "object") return read;
    const { value } = read;
    const deepAt = tooDeepAt(value, MAX_PARAMS_DEPTH);
    if (deepAt !== undefined) {
      this.alias(value);
      return { kind: "skip", reason: `nested deeper than ${MAX_PARAMS_DEPTH} levels (at ${deepAt || "the top"})` };
    }
    const type = typeof value.type === "string" ? value.type : "(no type)";
    if (type === "summary" || type === "custom-title") return this.titleLine(value, type);
    if (type === "queue-operation" && this.headerDone) {
      const delivered = this.queue.line(value);
      if (delivered !== undefined) return [...this.flushHeld(), this.queuedMessage(delivered, value)];
    }
    if (METADATA_TYPES.has(type) || (type === "system" && METADATA_SUBTYPES.has(String(value.subtype)))) {
      this.alias(value);
      return { kind: "ignored", what: type === "system" ? `system ${String(value.subtype)}` : type };
    }
    if (type !== "user" && type !== "assistant" && type !== "system" && typeof value.uuid !== "string") return { kind: "ignored", what: type };
    const out: ParsedLine[] = [];
    if (!this.headerDone) {
      if (typeof value.sessionId !== "string" || value.sessionId.length === 0) {
        this.alias(value);
        return { kind: "skip", reason: `a "${type}" line before any line names the session (sessionId)` };
      }
      out.push(this.header(value));
    }
    if (typeof value.uuid !== "string" || value.uuid.length === 0) {
      out.push({ kind: "skip", reason: `a "${type}" line without a uuid` });
      return out;
    }
    if (type === "attachment") {
      out.push(this.attachmentLine(value));
      return out.length === 1 ? out[0]! : out;
    }
    if (type === "user" && this.holds(value)) {
      this.userLine(value, out, this.order);
      return out.length === 0 ? { kind: "used" } : out.length === 1 ? out[0]! : out;
    }
    // Any other line ends a run of attachments: the user lines they came before are given now.
    out.push(...this.flushHeld());
    if (this.pendingBoundary && !(type === "user" && value.isCompactSummary === true)) out.push(...this.compaction(undefined));
    if (type === "system" && value.subtype === "compact_boundary") {
      this.pendingBoundary = { line: value, lineNumber };
      if (out.length === 0) return { kind: "used" };
      out.push({ kind: "used" });
      return out;
    }
    if (type === "user") this.userLine(value, out);
    else if (type === "assistant") out.push(this.entry(value, this.assistantMessage(value)));
    else out.push(this.entry(value, { type: "custom", customType: `claude-code.${type}`, data: payloadOf(value) }));
    return out.length === 1 ? out[0]! : out;
  }

  /**
   * The user lines held for attachments are given. A boundary at the very end waits for its
   * summary line, which Claude Code writes right after it: it stays pending, in the parser's
   * snapshot too, and the import that reads the summary line stores both (a compaction stored
   * without its summary could not be completed later: stored ids are passed over).
   */
  end(): readonly ParsedLine[] {
    return this.flushHeld();
  }

  leafId(): string | undefined {
    return this.mainLeaf;
  }

  private header(line: JsonObject): ParsedLine {
    this.headerDone = true;
    const sessionId = line.sessionId as string;
    this.sessionId = sessionId;
    this.subagentFile = line.isSidechain === true && typeof line.agentId === "string" && line.agentId.length > 0;
    // Which agent wrote the session (the editor's Sessions view says it); an export keeps it in the header.
    const extra: JsonObject = { importedFrom: "claude-code-jsonl" };
    if (this.title !== undefined) extra.name = this.title;
    return {
      kind: "header",
      header: {
        id: this.subagentFile ? `agent-${line.agentId as string}.${sessionId}` : sessionId,
        createdAt: typeof line.timestamp === "string" ? line.timestamp : undefined,
        cwd: typeof line.cwd === "string" ? line.cwd : undefined,
        parentSession: this.subagentFile ? sessionId : undefined,
        extra,
      },
    };
  }

  /** `summary` (older versions) and `custom-title` lines name the session. */
  private titleLine(line: JsonObject, type: string): ParsedLine {
    const title = type === "summary" ? line.summary : line.customTitle;
    if (typeof title !== "string" || title.trim().length === 0) return { kind: "skip", reason: `a "${type}" line without a title` };
    this.titleLines++;
    if (!this.headerDone) {
      this.title = title.trim();
      return { kind: "used" };
    }
    const id = `${this.sessionId}.title-${this.titleLines}`;
    return { kind: "entry", entry: { type: "session_info", id, parentId: this.mainLeaf ?? null, timestamp: this.ids.now(), name: title.trim() } };
  }

  /** A user line of the main conversation that is not a tool result: the attachments after it reach the model before it. */
  private holds(line: JsonObject): boolean {
    if (line.isCompactSummary === true || (line.isSidechain === true && !this.subagentFile)) return false;
    const content = isJsonObject(line.message) ? line.message.content : undefined;
    return !(Array.isArray(content) && content.some((block) => isJsonObject(block) && block.type === "tool_result"));
  }

  /**
   * An `attachment` line: what Claude Code's harness added to the turn (attachments.ts). One that
   * reaches the model is an injected-text message, given before the user lines held (turn-order.ts);
   * one that does not is kept as a `claude-code.attachment` entry.
   */
  private attachmentLine(line: JsonObject): ParsedLine {
    const uuid = line.uuid as string;
    const attachment = isJsonObject(line.attachment) ? line.attachment : {};
    const text = attachmentText(attachment);
    const parentId = this.order.attachmentParent(this.parentOf(line));
    const base = { id: uuid, parentId, timestamp: entryTimestamp(line, this.ids) };
    const entry: SessionEntry =
      text === undefined
        ? { type: "custom", ...base, customType: "claude-code.attachment", data: payloadOf(line) }
        : {
            type: "custom_message",
            ...base,
            customType: INJECTED_TEXT_TYPE,
            content: text,
            display: false,
            details: { source: "claude-code", kind: "attachment", attachment: typeof attachment.type === "string" ? attachment.type : "unknown" },
          };
    this.order.attached(uuid, uuid);
    // Between a tool call and its results (a reminder after each result) it does not break their run.
    this.chainOf(line).add(uuid, parentId, true);
    if (!this.order.holding) this.noteLeaf(line, uuid);
    return { kind: "entry", entry };
  }

  /**
   * A message the user typed while the agent worked, now given to the model: a user message (or,
   * for a harness notification queued the same way, injected text) under the main conversation's
   * latest entry; the lines after it, which name that entry, hang under it.
   */
  private queuedMessage(text: string, line: JsonObject): ParsedLine {
    const id = `${this.sessionId}.queued-${this.queue.delivered}`;
    const parentId = this.mainLeaf ?? null;
    const base = { id, parentId, timestamp: entryTimestamp(line, this.ids) };
    const kind = injectedKind(text, false);
    const timestamp = timeMs(line.timestamp);
    const entry: SessionEntry =
      kind !== undefined
        ? { type: "custom_message", ...base, customType: INJECTED_TEXT_TYPE, content: text, display: false, details: { source: "claude-code", kind } }
        : { type: "message", ...base, message: { role: "user", content: text, ...(timestamp !== undefined ? { timestamp } : {}) } };
    if (parentId !== null) this.aliases.set(parentId, id);
    this.chains[0]!.add(id, parentId, false);
    this.mainLeaf = id;
    return { kind: "entry", entry };
  }

  /** The user lines held for the attachments after them, now after them; lines naming an attachment hang under their end. */
  private flushHeld(): ParsedLine[] {
    const { entries, end, aliases } = this.order.flush();
    if (end === undefined) return [];
    for (const uuid of aliases) this.aliases.set(uuid, end);
    this.mainLeaf = end;
    return entries.map((entry) => ({ kind: "entry", entry }));
  }

  private userLine(line: JsonObject, out: ParsedLine[], held?: TurnOrder): void {
    const message = isJsonObject(line.message) ? line.message : {};
    if (line.isCompactSummary === true) {
      out.push(...this.compaction(line));
      return;
    }
    const parts = userParts(message.content, line.isMeta === true);
    if (parts.length === 0) {
      this.alias(line);
      out.push({ kind: "skip", reason: "a user line without content" });
      return;
    }
    const uuid = line.uuid as string;
    const timestamp = timeMs(line.timestamp);
    const chain = this.chainOf(line);
    let parentId = this.parentOf(line);
    // Claude Code hangs each result of parallel tool calls under the line of its own call, so
    // all but the last would be dead-end branches: they go in line, after what came before them.
    if (parentId !== null && parts.every((part) => part.kind !== "user")) parentId = chain.inLine(parentId);
    const entries: SessionEntry[] = [];
    parts.forEach((part, index) => {
      const id = index === 0 ? uuid : `${uuid}.${index}`;
      entries.push(this.partEntry(part, id, parentId, line, timestamp));
      chain.add(id, parentId, part.kind === "toolResult");
      parentId = id;
    });
    if (parts.length > 1) this.aliases.set(uuid, parentId);
    if (held) held.hold(uuid, entries);
    else {
      for (const entry of entries) out.push({ kind: "entry", entry });
      this.noteLeaf(line, parentId!);
    }
  }

  private chainOf(line: JsonObject): RecentChain {
    return this.chains[line.isSidechain === true && !this.subagentFile ? 1 : 0]!;
  }

  private partEntry(part: UserPart, id: string, parentId: string | null, line: JsonObject, timestamp: number | undefined): SessionEntry {
    const base = { id, parentId, timestamp: entryTimestamp(line, this.ids) };
    if (part.kind === "injected") {
      return {
        type: "custom_message",
        ...base,
        customType: INJECTED_TEXT_TYPE,
        content: part.text,
        display: false,
        details: { source: "claude-code", kind: part.injected },
      };
    }
    const message: AgentMessage =
      part.kind === "toolResult"
        ? toolResultMessage(part.block, this.toolNames.get(String(part.block.tool_use_id)) ?? "unknown", timestamp)
        : { role: "user", content: part.content, ...(timestamp !== undefined ? { timestamp } : {}) };
    return { type: "message", ...base, message };
  }

  private assistantMessage(line: JsonObject): { type: "message"; message: AgentMessage } {
    const message = isJsonObject(line.message) ? line.message : {};
    const { blocks, dropped } = assistantBlocks(message.content, this.toolNames);
    const model = typeof message.model === "string" && message.model !== "<synthetic>" ? message.model : undefined;
    const timestamp = timeMs(line.timestamp);
    const usage = usageOf(message.usage);
    const reason = line.isApiErrorMessage === true ? "error" : stopReason(message.stop_reason);
    return {
      type: "message",
      message: {
        role: "assistant",
        content: blocks,
        ...(model !== undefined ? { provider: PROVIDER, model, api: API } : {}),
        ...(usage !== undefined ? { usage } : {}),
        ...(reason !== undefined ? { stopReason: reason } : {}),
        ...(line.isApiErrorMessage === true ? { errorMessage: textOf(message.content) } : {}),
        ...(timestamp !== undefined ? { timestamp } : {}),
        ...(typeof message.id === "string" ? { responseId: message.id } : {}),
        ...(dropped.length > 0 ? { droppedBlocks: dropped } : {}),
      },
    };
  }

  /** A line stored as one entry with its own uuid. */
  private entry(line: JsonObject, body: { type: "message"; message: AgentMessage } | { type: "custom"; customType: string; data: unknown }): ParsedLine {
    const id = line.uuid as string;
    const entry = { ...body, id, parentId: this.parentOf(line), timestamp: entryTimestamp(line, this.ids) } as SessionEntry;
    this.chainOf(line).add(id, entry.parentId, body.type === "message" && body.message.role === "assistant");
    this.noteLeaf(line, id);
    return { kind: "entry", entry };
  }

  /**
   * Claude Code's compaction: the `compact_boundary` line (a new root; `logicalParentUuid` names
   * the last line before it) and the `isCompactSummary` user line holding the summary its model
   * wrote. Two entries under the last line before it: a marker (the boundary, a custom entry the
   * context never shows), then the compaction (the summary line's uuid), whose kept part starts at
   * the marker, or at the first of the messages Claude Code preserved after its summary (newer
   * versions). So the context built is the summary, what was preserved and what followed, as
   * Claude Code has it; and the range the compaction replaced is on the path before its first kept
   * entry, so usage and the retention check can measure it (as for Codex's).
   */
  private compaction(summaryLine: JsonObject | undefined): ParsedLine[] {
    const boundary = this.pendingBoundary?.line;
    this.pendingBoundary = undefined;
    const anchor = boundary ?? summaryLine!;
    const markerId = boundary ? (boundary.uuid as string) : `${anchor.uuid as string}.boundary`;
    const id = summaryLine ? (summaryLine.uuid as string) : `${anchor.uuid as string}.summary`;
    const parentId = this.boundaryParent(anchor);
    const metadata = boundary && isJsonObject(boundary.compactMetadata) ? boundary.compactMetadata : {};
    const summary = summaryLine ? textOf(isJsonObject(summaryLine.message) ? summaryLine.message.content : undefined) : MISSING_SUMMARY;
    if (boundary) this.aliases.set(boundary.uuid as string, id);
    if (summaryLine) this.aliases.set(summaryLine.uuid as string, id);
    this.noteLeaf(anchor, id);
    const timestamp = entryTimestamp(anchor, this.ids);
    const trigger = typeof metadata.trigger === "string" ? { trigger: metadata.trigger } : {};
    // Newer versions keep the latest messages after the summary (`preservedSegment`, head to tail,
    // ending right before the boundary): the compaction's kept part starts at its head.
    const preserved = isJsonObject(metadata.preservedSegment) ? metadata.preservedSegment : undefined;
    const keptFrom =
      preserved && typeof preserved.headUuid === "string" && preserved.tailUuid === anchor.logicalParentUuid
        ? this.resolve(preserved.headUuid)
        : null;
    return [
      {
        kind: "entry",
        entry: { type: "custom", id: markerId, parentId, timestamp, customType: "claude-code.compact_boundary", data: { ...metadata } },
      },
      {
        kind: "entry",
        entry: {
          type: "compaction",
          id,
          parentId: markerId,
          timestamp,
          summary,
          firstKeptEntryId: keptFrom ?? markerId,
          tokensBefore: typeof metadata.preTokens === "number" ? metadata.preTokens : null,
          details: { source: "claude-code", ...trigger },
        },
      },
    ];
  }

  /**
   * What a compaction hangs under: the line its boundary names (`logicalParentUuid`), or, when
   * Claude Code did not write that line to the file (the hook messages of the turn before a
   * compaction are sometimes missing), the last main-chain entry read before it. Named as it is,
   * the compaction would become a root and the history before it a tree of its own, out of the
   * context path and out of what the next summary reads.
   */
  private boundaryParent(anchor: JsonObject): string | null {
    const named = this.resolve(typeof anchor.logicalParentUuid === "string" ? anchor.logicalParentUuid : anchor.parentUuid);
    if (named === null || this.mainLeaf === undefined || this.chains[0]!.has(named) || this.aliases.has(named)) return named;
    return this.mainLeaf;
  }

  private parentOf(line: JsonObject): string | null {
    return this.resolve(line.parentUuid);
  }

  /** The id a line naming `parentUuid` hangs under: followed through aliases (a line stored under another id, or not stored). */
  private resolve(parentUuid: unknown): string | null {
    if (typeof parentUuid !== "string" || parentUuid.length === 0) return null;
    let current: string | null = parentUuid;
    for (let hops = 0; current !== null && hops < MAX_ALIAS_HOPS; hops++) {
      const alias = this.aliases.get(current);
      if (alias === undefined || alias === current) return current;
      current = alias;
    }
    return current;
  }

  /** A line that is not stored: its children hang under its own (resolved) parent. */
  private alias(line: JsonObject): void {
    if (typeof line.uuid === "string" && line.uuid.length > 0) this.aliases.set(line.uuid, this.parentOf(line));
  }

  private noteLeaf(line: JsonObject, id: string): void {
    if (line.isSidechain !== true || this.subagentFile) this.mainLeaf = id;
  }
}

/** How far back a parallel tool call's result is looked for. */
const RECENT_ENTRIES = 256;
/** Aliases followed at most from one parent uuid (a run's attachments, then a line stored under another id…). */
const MAX_ALIAS_HOPS = 16;
/**
 * Aliases and tool names a snapshot keeps: the latest, which are what the lines after it name (a
 * progress line's child comes right after it, a tool's result within its turn). Saved at every
 * import and read back at the next: a few hundred keep it small.
 */
const SNAPSHOT_PAIRS = 512;

/**
 * The latest entries of one chain (id → parent, and whether it is part of a tool-call run:
 * assistant lines and tool results), in a bounded window.
 */
class RecentChain {
  private readonly parents = new Map<string, { parentId: string | null; inRun: boolean }>();
  private tip: string | undefined;

  snapshot(): unknown {
    return { entries: [...this.parents].map(([id, { parentId, inRun }]) => [id, [parentId, inRun]]), tip: this.tip ?? null };
  }

  restore(state: SnapshotReader): void {
    const entries = state.pairs("entries", (value) => {
      if (!Array.isArray(value) || typeof value[1] !== "boolean") throw new SnapshotError("entries: not [parent, inRun]");
      return { parentId: stringOrNullValue(value[0]), inRun: value[1] };
    });
    for (const [id, entry] of entries) this.parents.set(id, entry);
    this.tip = state.optionalString("tip");
  }

  /** Whether `id` is one of the chain's latest entries. */
  has(id: string): boolean {
    return this.parents.has(id);
  }

  add(id: string, parentId: string | null, inRun: boolean): void {
    this.parents.set(id, { parentId, inRun });
    this.tip = id;
    if (this.parents.size > RECENT_ENTRIES) this.parents.delete(this.parents.keys().next().value!);
  }

  /**
   * The parent a tool result line should have: the chain's latest entry when that descends from
   * `parentId` through assistant lines and tool results only (parallel calls of one turn);
   * otherwise `parentId` as the file says (a real branch: a retry, an edit).
   */
  inLine(parentId: string): string {
    if (this.tip === undefined || this.tip === parentId) return parentId;
    let current: string | null = this.tip;
    for (let steps = 0; current !== null && steps < RECENT_ENTRIES; steps++) {
      if (current === parentId) return this.tip;
      const known = this.parents.get(current);
      if (known === undefined || !known.inRun) return parentId;
      current = known.parentId;
    }
    return parentId;
  }
}

/** A user line's content in entry-sized parts, in order: the human's words, injected text, tool results. */
function userParts(content: unknown, isMeta: boolean): UserPart[] {
  const parts: UserPart[] = [];
  const addText = (text: string) => {
    const kind = injectedKind(text, isMeta);
    if (kind !== undefined) return addInjected(kind, text);
    const { own, reminders } = splitReminders(text);
    if (own.length > 0) addUser({ type: "text", text: own });
    if (reminders.length > 0) addInjected("system-reminder", reminders);
  };
  const addInjected = (kind: InjectedKind, text: string) => {
    const last = parts[parts.length - 1];
    if (last?.kind === "injected" && last.injected === kind) last.text += `\n${text}`;
    else parts.push({ kind: "injected", injected: kind, text });
  };
  const addUser = (block: UserContentBlock) => {
    const last = parts[parts.length - 1];
    if (last?.kind === "user" && typeof last.content !== "string") last.content.push(block);
    else parts.push({ kind: "user", content: [block] });
  };
  if (typeof content === "string") {
    if (content.length > 0) addText(content);
    // The human's words as the file has them: a string stays a string.
    for (const part of parts) if (part.kind === "user" && typeof part.content !== "string") part.content = textOf(part.content);
    return parts;
  }
  if (!Array.isArray(content)) return parts;
  for (const block of content) {
    if (!isJsonObject(block)) continue;
    if (block.type === "tool_result") parts.push({ kind: "toolResult", block });
    else if (block.type === "text" && typeof block.text === "string") addText(block.text);
    else {
      const converted = userBlock(block);
      if (converted) addUser(converted);
    }
  }
  return parts;
}

/** What a kept `system` or unknown line says, without the fields every line carries. */
function payloadOf(line: JsonObject): JsonObject {
  const data: JsonObject = {};
  for (const [key, value] of Object.entries(line)) if (!ENVELOPE.has(key)) data[key] = value;
  return data;
}

function timeMs(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function entryTimestamp(line: JsonObject, ids: Pick<IdSource, "now">): string {
  return typeof line.timestamp === "string" && line.timestamp.length > 0 ? line.timestamp : ids.now();
}
