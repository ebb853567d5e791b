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
  run as runAgent,
  type AgentInputItem,
  type NonStreamRunOptions,
  type RunResult,
  type RunState,
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
  type EntryInput,
  type SessionEntry,
} from "@base-context/protocol";
import { BaseContextError, type DaemonGoneError } from "./errors.js";
import { historyView } from "./history.js";
import { groupItems, groupToEntry, withUsage } from "./items.js";
import { COMPACTION_ENDPOINT, lendModel, type LentUsage } from "./lend-model.js";
import { DaemonLink, type DaemonOptions } from "./link.js";
import { rewriteFrom } from "./rewrite.js";
import { applyTransaction, structurallyEqual } from "./transaction.js";

export interface BaseContextSessionOptions {
  /**
   * The model's context window in tokens: the daemon compacts past it minus `compaction.reserveTokens`,
   * and fits the sizes you did not set to it (the reserve at most a quarter of it, the kept part a quarter).
   */
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
  /**
   * This session's `compaction.*` settings (e.g. keepRecentTokens), over the daemon's: used for the
   * threshold (`context/usage`) and every compaction (`compaction/run`).
   */
  compaction?: Partial<CompactionSettings>;
  /** Instructions added to every summary request (what to keep). */
  summaryInstructions?: string;
}

/** Any agent the SDK's `run` takes. */
type RunnableAgent = Parameters<typeof runAgent>[0];

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
  /** Aborted when the connection's daemon goes away; a new connection (after a failed start) gets a new one. */
  private daemonGone = new AbortController();
  /** The context's tokens after the latest runCompaction, and the most one run has added (what the next may add). */
  private readonly runs: { after: number | undefined; largest: number } = { after: undefined, largest: 0 };

  constructor(private readonly options: BaseContextSessionOptions) {
    checkOptions(options);
  }

  /**
   * Aborted, with the `DaemonGoneError`, the moment the daemon goes away (killed, crashed, its socket
   * closed; not `close()`). Pass it to the runner, `run(agent, input, { session, signal: session.signal })`,
   * and a run stops at once instead of spending model calls and tools it can no longer store.
   */
  get signal(): AbortSignal {
    return this.daemonGone.signal;
  }

  /**
   * The SDK's `run(agent, input, options)` on this session, with its `signal`: the run stops the
   * moment the daemon goes away and rejects with the `DaemonGoneError` (how the daemon ended), not
   * the SDK's abort error. A `signal` in `options` still cancels it as usual.
   */
  async run<TAgent extends RunnableAgent, TContext = undefined>(
    agent: TAgent,
    input: string | AgentInputItem[] | RunState<TContext, TAgent>,
    options: Omit<NonStreamRunOptions<TContext, TAgent>, "session" | "stream"> = {},
  ): Promise<RunResult<TContext, TAgent>> {
    // Connected first: the signal is this connection's (a failed start rejects here, and the next run tries again).
    await this.open();
    const signal = options.signal ? AbortSignal.any([options.signal, this.signal]) : this.signal;
    try {
      return await runAgent(agent, input, { ...options, session: this, signal });
    } catch (error) {
      if (this.signal.aborted && options.signal?.aborted !== true) throw this.signal.reason;
      throw error;
    }
  }

  /** The connection and the session, opened on first use. */
  private open(): Promise<{ link: DaemonLink; sessionId: string }> {
    this.opening ??= (async () => {
      const model = this.options.model;
      if (this.daemonGone.signal.aborted) this.daemonGone = new AbortController();
      const gone = this.daemonGone;
      const onGone = (error: DaemonGoneError) => gone.abort(error);
      const link = await DaemonLink.open(this.options.daemon ?? {}, (client: BaseContextClient) => {
        if (model) lendModel(client, model, this.lent);
      }, onGone);
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

  /**
   * Stores the items, one entry per message. The run's last model response carries that request's
   * token usage (the provider's count, instructions and tool schemas included): the daemon measures
   * the context with it, as it does for every client's replies.
   */
  async addItems(items: AgentInputItem[], runContext?: RunContext<unknown>): Promise<void> {
    if (items.length === 0) return;
    let entries: EntryInput[];
    try {
      entries = withUsage(groupItems(items).map(groupToEntry), runContext?.usage);
    } catch (error) {
      // An item that is not plain data (a function, a class instance the structured clone refuses).
      throw new BaseContextError("invalid_items", `the items cannot be stored: ${(error as Error).message}`, { cause: error });
    }
    const { link, sessionId } = await this.open();
    await link.request(EntryAppendMany, { sessionId, entries, requestId: randomUUID() });
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
    if (first?.["type"] !== "compaction") throw new BaseContextError("invalid_items", "replaceHistoryWithCompaction needs a compaction item first");
    const { link, sessionId, entries } = await this.path();
    const view = historyView(entries);
    const current = view.items.map((item) => item.item);
    if (current.length === items.length && structurallyEqual(current, items)) return;
    await rewriteFrom(link, sessionId, view, 0, items.slice(1), { providerCompaction: items[0]! });
  }

  /**
   * Called by the runner after each completed turn: compacts when the daemon's threshold for
   * `contextWindow` says the context is too full, when a run as large as the largest so far would
   * not fit what is left of the window (the runner compacts only between runs), or always with
   * `force`. Returns the usage of the lent model's summary calls, or null when nothing was compacted
   * (or the daemon's own summarizer wrote it).
   */
  async runCompaction(
    args?: OpenAIResponsesCompactionArgs,
    _runContext?: RunContext<unknown>,
  ): Promise<OpenAIResponsesCompactionResult | null> {
    const { link, sessionId } = await this.open();
    const contextWindow = this.options.contextWindow;
    const settings = this.options.compaction ? { settings: this.options.compaction } : {};
    let tokens: number | undefined;
    if (args?.force !== true) {
      const usage = await link.request(ContextUsage, { sessionId, contextWindow, ...settings });
      tokens = usage.tokens;
      if (this.runs.after !== undefined) this.runs.largest = Math.max(this.runs.largest, usage.tokens - this.runs.after);
      // The runner compacts only between runs: one as large as the largest so far must still fit after this one.
      const nextRunFits = usage.tokens + this.runs.largest <= contextWindow;
      if (!usage.shouldCompact && nextRunFits) {
        const why = usage.reason !== undefined ? `; ${usage.reason}` : "";
        this.lastCompaction = { skipped: `under the threshold (${usage.tokens}/${usage.threshold} tokens)${why}` };
        this.runs.after = usage.tokens;
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
        ...settings,
        ...(this.options.summaryInstructions !== undefined ? { customInstructions: this.options.summaryInstructions } : {}),
      });
    } catch (error) {
      // Another client is compacting or navigating this session: its result will be in the next read.
      if (error instanceof BaseContextError && error.rpcCode === ErrorCodes.Busy) {
        this.lastCompaction = { skipped: "the session is busy with another long operation" };
        return null;
      }
      throw error;
    }
    this.lastCompaction = { result };
    this.runs.after = result.status === "committed" ? (result.stats?.tokensAfter ?? tokens) : tokens;
    const requests = this.lent.requests - before.requests;
    if (result.status !== "committed" || requests === 0) return null;
    const input = this.lent.input - before.input;
    const output = this.lent.output - before.output;
    const totalTokens = input + output;
    return { usage: new RequestUsage({ inputTokens: input, outputTokens: output, totalTokens, endpoint: COMPACTION_ENDPOINT }) };
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

/** The options' own mistakes, before any daemon is asked (the daemon checks the rest). */
function checkOptions(options: BaseContextSessionOptions): void {
  if (!Number.isInteger(options.contextWindow) || options.contextWindow <= 0) {
    throw new BaseContextError("invalid_options", `contextWindow must be a positive integer of tokens, got ${String(options.contextWindow)}`);
  }
  for (const key of ["reserveTokens", "keepRecentTokens"] as const) {
    const value = options.compaction?.[key];
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) {
      throw new BaseContextError("invalid_options", `compaction.${key} must be a non-negative integer of tokens, got ${String(value)}`);
    }
  }
}
