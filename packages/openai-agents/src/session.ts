/**
 * `BaseContextSession`: an OpenAI Agents SDK session whose history is a Base Context session. Items
 * are entries of the session's tree; `getItems` is the context the model must see (the latest
 * compaction's summary, the kept items, what came after); `runCompaction` asks the daemon to compact
 * when its threshold says so; `popItem`, `clearSession` and suffix replacements move the session's
 * leaf and never delete history (see docs/openai-agents.md).
 */
import { randomUUID } from "node:crypto";
import {
  RequestUsage,
  UserError,
  type AgentInputItem,
  type Model,
  type OpenAIResponsesCompactionArgs,
  type OpenAIResponsesCompactionAwareSession,
  type OpenAIResponsesCompactionResult,
  type RunContext,
  type RunContextAwareSession,
  type SessionHistoryTransactionArgs,
  type SessionHistoryTransactionAwareSession,
} from "@openai/agents";
import {
  CompactionRun,
  ContextUsage,
  EntryAppendMany,
  ErrorCodes,
  SessionBranch,
  SessionCreate,
  SessionPath,
  type BaseContextClient,
  type CompactionResult,
  type CompactionSettings,
  type SessionEntry,
} from "@base-context/protocol";
import { historyView } from "./history.js";
import { lendModel, type LentUsage } from "./lend-model.js";
import { DaemonLink, type DaemonOptions } from "./link.js";
import { applyTransaction, rewriteFrom, structurallyEqual } from "./rewrite.js";
import { groupItems, groupToEntry } from "./items.js";

export interface BaseContextSessionOptions {
  /** The model's context window in tokens: the daemon compacts past it minus `compaction.reserveTokens`. */
  contextWindow: number;
  /** Continue this Base Context session; a new one is created on first use otherwise. */
  sessionId?: string;
  /** The session's working folder (its project: settings and plugins are looked up from it). Default: process.cwd(). */
  cwd?: string;
  /** How to reach the daemon. Default: spawn `base-context serve` from PATH. */
  daemon?: DaemonOptions;
  /**
   * The model that writes the summaries, lent to the daemon over `model/complete`: an Agents SDK
   * `Model`, or a model name for the SDK's OpenAI provider (OPENAI_API_KEY…). Without it, the
   * daemon's configured summarizer writes them.
   */
  model?: Model | string;
  /** Overrides of the daemon's `compaction.*` settings for this session's compactions (e.g. keepRecentTokens). */
  compaction?: Partial<CompactionSettings>;
  /** Instructions added to every summary request (what to keep). */
  summaryInstructions?: string;
}

/** What `runCompaction` did last (for logs and tests): the daemon's reply, or why nothing ran. */
export type LastCompaction = { result: CompactionResult } | { skipped: string };

export class BaseContextSession
  implements RunContextAwareSession, OpenAIResponsesCompactionAwareSession, SessionHistoryTransactionAwareSession
{
  readonly acceptsRunContext = true as const;
  /** What the latest `runCompaction` did. */
  lastCompaction: LastCompaction | undefined;
  private opening: Promise<{ link: DaemonLink; sessionId: string }> | undefined;
  private readonly lent: LentUsage = { requests: 0, input: 0, output: 0 };

  constructor(private readonly options: BaseContextSessionOptions) {
    if (!Number.isInteger(options.contextWindow) || options.contextWindow <= 0) {
      throw new UserError(`contextWindow must be a positive integer of tokens, got ${String(options.contextWindow)}`);
    }
  }

  /** The connection and the session, opened on first use. */
  private open(): Promise<{ link: DaemonLink; sessionId: string }> {
    this.opening ??= (async () => {
      const model = this.options.model;
      const link = await DaemonLink.open(this.options.daemon ?? {}, (client: BaseContextClient) => {
        if (model) lendModel(client, model, this.lent);
      });
      try {
        if (this.options.sessionId !== undefined) return { link, sessionId: this.options.sessionId };
        const { session } = await link.request(SessionCreate, { cwd: this.options.cwd ?? process.cwd() });
        return { link, sessionId: session.id };
      } catch (error) {
        await link.close().catch(() => undefined);
        throw error;
      }
    })();
    this.opening.catch(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async path(): Promise<{ link: DaemonLink; sessionId: string; entries: SessionEntry[] }> {
    const { link, sessionId } = await this.open();
    const { entries } = await link.request(SessionPath, { sessionId });
    return { link, sessionId, entries };
  }

  async getSessionId(): Promise<string> {
    return (await this.open()).sessionId;
  }

  async getItems(limit?: number, _runContext?: RunContext<unknown>): Promise<AgentInputItem[]> {
    const { entries } = await this.path();
    const items = historyView(entries).items.map((view) => view.item);
    if (limit === undefined) return items;
    return limit <= 0 ? [] : items.slice(-limit);
  }

  async addItems(items: AgentInputItem[], _runContext?: RunContext<unknown>): Promise<void> {
    if (items.length === 0) return;
    const { link, sessionId } = await this.open();
    await link.request(EntryAppendMany, { sessionId, entries: groupItems(items).map(groupToEntry), requestId: randomUUID() });
  }

  async popItem(_runContext?: RunContext<unknown>): Promise<AgentInputItem | undefined> {
    const { link, sessionId, entries } = await this.path();
    const view = historyView(entries);
    const last = view.items.at(-1);
    if (!last) return undefined;
    await rewriteFrom(link, sessionId, view, view.items.length - 1, []);
    return last.item;
  }

  /** Moves the session's leaf before its first entry: the history stays in the tree, the next item starts a new branch. */
  async clearSession(_runContext?: RunContext<unknown>): Promise<void> {
    const { link, sessionId } = await this.open();
    await link.request(SessionBranch, { sessionId, entryId: null });
  }

  async applyHistoryTransaction(args: SessionHistoryTransactionArgs, _runContext?: RunContext<unknown>): Promise<void> {
    const { link, sessionId } = await this.open();
    await applyTransaction(link, sessionId, args);
  }

  /**
   * The SDK's own compaction (OpenAI's `responses.compact`) hands over its compaction item and the
   * items it retained: stored as a compaction entry that keeps the item, followed by the retained
   * items, on the current branch.
   */
  async replaceHistoryWithCompaction(items: AgentInputItem[], _runContext?: RunContext<unknown>): Promise<void> {
    const first = items[0] as Record<string, unknown> | undefined;
    if (first?.["type"] !== "compaction") throw new UserError("replaceHistoryWithCompaction needs a compaction item first");
    const { link, sessionId, entries } = await this.path();
    const view = historyView(entries);
    const current = view.items.map((item) => item.item);
    if (current.length === items.length && structurallyEqual(current, items)) return;
    await rewriteFrom(link, sessionId, view, 0, items.slice(1), { providerCompaction: items[0]! });
  }

  /**
   * Called by the runner after each completed turn: compacts when the daemon's threshold for
   * `contextWindow` says the context is too full, or always with `force`. Returns the usage of the
   * lent model's summary calls, or null when nothing was compacted (or the daemon's own summarizer wrote it).
   */
  async runCompaction(
    args?: OpenAIResponsesCompactionArgs,
    _runContext?: RunContext<unknown>,
  ): Promise<OpenAIResponsesCompactionResult | null> {
    const { link, sessionId } = await this.open();
    const contextWindow = this.options.contextWindow;
    if (args?.force !== true) {
      const usage = await link.request(ContextUsage, { sessionId, contextWindow });
      if (!usage.shouldCompact) {
        this.lastCompaction = { skipped: `under the threshold (${usage.tokens}/${usage.threshold} tokens)` };
        return null;
      }
    }
    const before = { ...this.lent };
    let result: CompactionResult;
    try {
      result = await link.request(CompactionRun, {
        sessionId,
        reason: args?.force === true ? "manual" : "threshold",
        contextWindow,
        requestId: randomUUID(),
        ...(this.options.compaction ? { settings: this.options.compaction } : {}),
        ...(this.options.summaryInstructions !== undefined ? { customInstructions: this.options.summaryInstructions } : {}),
      });
    } catch (error) {
      // Another client is compacting or navigating this session: its result will be in the next read.
      if ((error as { code?: number }).code === ErrorCodes.Busy) {
        this.lastCompaction = { skipped: "the session is busy with another long operation" };
        return null;
      }
      throw error;
    }
    this.lastCompaction = { result };
    const requests = this.lent.requests - before.requests;
    if (result.status !== "committed" || requests === 0) return null;
    const input = this.lent.input - before.input;
    const output = this.lent.output - before.output;
    return { usage: new RequestUsage({ inputTokens: input, outputTokens: output, totalTokens: input + output, endpoint: "base-context.compaction" }) };
  }

  /** Ends the connection (a spawned daemon exits). The session stays stored. */
  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    if (!opening) return;
    const { link } = await opening.catch(() => ({ link: undefined }));
    await link?.close();
  }
}
