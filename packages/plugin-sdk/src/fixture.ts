/**
 * A session built in a few lines, for plugin tests: append messages, labels, compactions; branch;
 * then ask for the event a hook would receive. The compaction event comes from the daemon's own
 * `prepareCompaction` and the tree event from its branch collection, so a plugin is tested on
 * the preparation the daemon would really hand it (token counts are estimated as characters / 4).
 */
import {
  collectEntriesForBranchSummary,
  entryToContextMessage,
  prepareCompaction,
  type CountedEntry,
} from "@base-context/core";
import type {
  AgentMessage,
  CompactHookEvent,
  CompactionEntry,
  SessionEntry,
  Settings,
  TreeHookEvent,
  UserContentBlock,
} from "@base-context/protocol";

/** The daemon's default settings (docs/design.md#files-and-merge), with any sections replaced by `overrides`. */
export function testSettings(overrides: { [K in keyof Settings]?: Partial<Settings[K]> } = {}): Settings {
  const defaults: Settings = {
    compaction: {
      enabled: true,
      reserveTokens: 16384,
      keepRecentTokens: 20000,
      prune: { enabled: true, protectTokens: 40_000, minTokens: 1_000, minSavings: 20_000 },
    },
    branchSummary: { reserveTokens: 16384 },
    context: { mode: "on" },
    tokens: { encoding: "o200k_base", estimator: "exact" },
    summarizer: { provider: "auto", apiKeyEnv: "OPENAI_API_KEY", fallback: true, timeoutMs: 120_000, maxRetries: 3 },
    summary: { repair: true },
    plugins: { hookTimeoutMs: 30_000, enabled: true, order: [], maxMessageBytes: 8 * 1024 * 1024, isolation: "worker" },
    limits: {
      maxMessageBytes: 64 * 1024 * 1024,
      maxEntryBytes: 16 * 1024 * 1024,
      maxSummaryBytes: 1024 * 1024,
      maxImportLineBytes: 64 * 2 ** 20,
      maxImportFileBytes: 4 * 2 ** 30,
      maxQueuedOutputBytes: 64 * 1024 * 1024,
    },
    store: {},
  };
  const merged = { ...defaults } as Record<keyof Settings, unknown>;
  for (const key of Object.keys(overrides) as (keyof Settings)[]) merged[key] = { ...defaults[key], ...overrides[key] };
  return merged as Settings;
}

export interface ToolCallSpec {
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface CompactEventOptions {
  /** Default: the tokens of the last turn, so the cut lands on the last user message. */
  keepRecentTokens?: number;
  reserveTokens?: number;
  customInstructions?: string;
  /** Token count per entry (default: characters of its message / 4). */
  tokensOf?(entry: SessionEntry): number;
}

export interface TreeEventOptions {
  userWantsSummary?: boolean;
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}

type EntryBody = SessionEntry extends infer E ? (E extends SessionEntry ? Omit<E, "id" | "parentId" | "timestamp"> : never) : never;

function estimateTokens(entry: SessionEntry): number {
  const message = entryToContextMessage(entry);
  return message === undefined ? 0 : Math.ceil(JSON.stringify(message).length / 4);
}

export class SessionFixture {
  private readonly byId = new Map<string, SessionEntry>();
  private leaf: string | null = null;
  private count = 0;
  private readonly start = Date.parse("2025-01-01T00:00:00.000Z");
  /** Tool calls without a result yet, oldest first: `toolResult` answers them in order. */
  private readonly openToolCalls: { id: string; name: string }[] = [];

  /** Appends any entry body under the current leaf and moves the leaf to it. */
  append(body: EntryBody, options: { id?: string } = {}): this {
    this.count += 1;
    const id = options.id ?? `e${this.count}`;
    if (this.byId.has(id)) throw new Error(`duplicate entry id "${id}"`);
    const timestamp = new Date(this.start + this.count * 1000).toISOString();
    const entry = { ...body, id, parentId: this.leaf, timestamp } as SessionEntry;
    this.byId.set(id, entry);
    this.leaf = id;
    return this;
  }

  private message(message: AgentMessage, id?: string): this {
    return this.append({ type: "message", message }, id === undefined ? {} : { id });
  }

  private get now(): number {
    return this.start + (this.count + 1) * 1000;
  }

  user(content: string | UserContentBlock[], options: { id?: string } = {}): this {
    return this.message({ role: "user", content, timestamp: this.now }, options.id);
  }

  assistant(text: string, options: { id?: string; toolCalls?: ToolCallSpec[]; thinking?: string } = {}): this {
    const content: Extract<AgentMessage, { role: "assistant" }>["content"] = [];
    if (options.thinking !== undefined) content.push({ type: "thinking", thinking: options.thinking });
    if (text.length > 0) content.push({ type: "text", text });
    for (const call of options.toolCalls ?? []) {
      const id = call.id ?? `call_${this.count + 1}_${content.length}`;
      content.push({ type: "toolCall", id, name: call.name, arguments: call.arguments });
      this.openToolCalls.push({ id, name: call.name });
    }
    const stopReason = options.toolCalls?.length ? "toolUse" : "stop";
    return this.message({ role: "assistant", content, stopReason, provider: "test", model: "test-model", timestamp: this.now }, options.id);
  }

  /** Answers the oldest open tool call (or the one named by `toolCallId`). */
  toolResult(text: string, options: { id?: string; toolCallId?: string; isError?: boolean } = {}): this {
    const index = options.toolCallId === undefined ? 0 : this.openToolCalls.findIndex((call) => call.id === options.toolCallId);
    const [call] = index >= 0 ? this.openToolCalls.splice(index, 1) : [];
    return this.message(
      {
        role: "toolResult",
        toolCallId: options.toolCallId ?? call?.id ?? "call_unknown",
        toolName: call?.name ?? "tool",
        content: [{ type: "text", text }],
        isError: options.isError ?? false,
        timestamp: this.now,
      },
      options.id,
    );
  }

  /** Labels an entry (default: the current leaf); `undefined` clears its label. */
  label(label: string | undefined, targetId: string | null = this.leaf): this {
    if (targetId === null) throw new Error("nothing to label: the fixture is empty");
    return this.append(label === undefined ? { type: "label", targetId } : { type: "label", targetId, label });
  }

  compaction(
    fields: Omit<CompactionEntry, "type" | "id" | "parentId" | "timestamp" | "tokensBefore"> & { tokensBefore?: number | null },
  ): this {
    return this.append({ type: "compaction", ...fields, tokensBefore: fields.tokensBefore ?? null });
  }

  branchSummary(summary: string, fromId: string, details?: unknown): this {
    return this.append(
      details === undefined ? { type: "branch_summary", summary, fromId } : { type: "branch_summary", summary, fromId, details },
    );
  }

  /** Moves the leaf (like `session/branch`): the next append starts a new branch from there. */
  branchFrom(entryId: string | null): this {
    if (entryId !== null && !this.byId.has(entryId)) throw new Error(`no entry "${entryId}"`);
    this.leaf = entryId;
    return this;
  }

  get leafId(): string | null {
    return this.leaf;
  }

  /** The id of the entry appended last on the current path (the leaf). */
  get lastId(): string {
    if (this.leaf === null) throw new Error("the fixture is empty");
    return this.leaf;
  }

  entry(id: string): SessionEntry {
    const entry = this.byId.get(id);
    if (entry === undefined) throw new Error(`no entry "${id}"`);
    return entry;
  }

  /** Root → entry. */
  pathTo(entryId: string | null): SessionEntry[] {
    const path: SessionEntry[] = [];
    for (let id = entryId; id !== null; ) {
      const entry = this.entry(id);
      path.push(entry);
      id = entry.parentId;
    }
    return path.reverse();
  }

  /** Root → current leaf: what `branchEntries` holds. */
  get entries(): SessionEntry[] {
    return this.pathTo(this.leaf);
  }

  /** The `session_before_compact` event the daemon would send for the current leaf. */
  compactEvent(options: CompactEventOptions = {}): CompactHookEvent {
    const path = this.entries;
    const tokensOf = options.tokensOf ?? estimateTokens;
    const counted: CountedEntry[] = path.map((entry) => ({ entry, tokens: tokensOf(entry) }));
    const lastUser = path.findLastIndex((entry) => entry.type === "message" && entry.message.role === "user");
    const lastTurnTokens = counted.slice(Math.max(lastUser, 0)).reduce((sum, item) => sum + item.tokens, 0);
    const settings = {
      enabled: true,
      reserveTokens: options.reserveTokens ?? 16384,
      keepRecentTokens: options.keepRecentTokens ?? Math.max(lastTurnTokens, 1),
    };
    const prepared = prepareCompaction(counted, settings);
    if ("nothing" in prepared) throw new Error(`nothing to compact in this fixture: ${prepared.nothing}`);
    const event: CompactHookEvent = { preparation: prepared.preparation, branchEntries: path };
    if (options.customInstructions !== undefined) event.customInstructions = options.customInstructions;
    return event;
  }

  /** The `session_before_tree` event for navigating from the current leaf to `targetId`. */
  treeEvent(targetId: string, options: TreeEventOptions = {}): TreeHookEvent {
    const oldPath = this.entries.map((entry) => ({ entry, tokens: estimateTokens(entry) }));
    const targetPathIds = this.pathTo(targetId).map((entry) => entry.id);
    const { entries, commonAncestorId } = collectEntriesForBranchSummary(oldPath, targetPathIds);
    return {
      preparation: {
        targetId,
        oldLeafId: this.leaf,
        commonAncestorId,
        entriesToSummarize: entries.map((item) => item.entry),
        userWantsSummary: options.userWantsSummary ?? true,
        ...(options.customInstructions === undefined ? {} : { customInstructions: options.customInstructions }),
        ...(options.replaceInstructions === undefined ? {} : { replaceInstructions: options.replaceInstructions }),
        ...(options.label === undefined ? {} : { label: options.label }),
      },
    };
  }
}

export function sessionFixture(): SessionFixture {
  return new SessionFixture();
}
