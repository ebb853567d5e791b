/**
 * Base Context for pi: pi's compactions and branch summaries are written by the Base Context
 * daemon (`summarize/compaction`, `summarize/branch`), which runs its plugins (isolated, with
 * deadlines), its summarizer chain (pi's own model first, lent through `model/complete`, with an
 * offline fallback) and checks every summary against what it replaces (`details.retention`),
 * repairing what it lost. pi keeps its sessions; the daemon stores nothing.
 *
 * When the daemon cannot be reached or fails, the handlers return nothing and pi does what it
 * does without the extension, with a warning: the extension never breaks pi.
 *
 * What happened is shown where pi keeps it: a compaction (or a `/tree` summary) ends with pi
 * clearing and rebuilding its chat, which wipes any notification posted before. So the writer of
 * each summary and its retention line go to the footer's status line, and a warning (daemon
 * failed, or a fallback wrote the summary) to a widget above the editor; both stay until the next
 * summary. `/bc-status` tells the rest.
 *
 *   pi -e ./base-context/index.ts          (or install it, see README.md)
 *   BASE_CONTEXT_SOCKET=/path     use a shared daemon (`base-context serve --socket`) instead of spawning one
 *   BASE_CONTEXT_DAEMON=/path     the daemon to spawn (its cli/main.js, or a command)
 */
import type { ExtensionAPI, ExtensionContext, SessionBeforeCompactEvent, SessionBeforeTreeEvent } from "@mariozechner/pi-coding-agent";
import { type BaseContextClient, ErrorCodes, SummarizeBranch, SummarizeCompaction, type SummarizeResult } from "@base-context/protocol";
import { DaemonLink, withTimeout } from "./daemon-link.js";
import { lendModel } from "./lend-model.js";
import { fileListsOf } from "./pi-shapes.js";
import { attentionLines, failureReport, reportOf, statusLine, type SummaryKind, type SummaryReport } from "./report.js";
import { statusLines } from "./status.js";

/** What a handler returns for pi to end the compaction or navigation without a summary. */
const CANCEL = { cancel: true } as const;

/** The key of the extension's footer status and widget. */
const UI_KEY = "base-context";

/** The longest a summary may take before pi summarizes by itself (the daemon's own model calls time out sooner). */
const SUMMARY_TIMEOUT_MS = positiveOr(Number(process.env["BASE_CONTEXT_PI_TIMEOUT_MS"]), 300_000);

/** What the handlers share: the daemon link, the latest context pi gave a handler, the last summary's report. */
interface ExtensionState {
  readonly link: DaemonLink;
  /** Whose model `model/complete` uses. */
  current: ExtensionContext | undefined;
  /** The last summary asked for in this pi session, for `/bc-status`. */
  last: SummaryReport | undefined;
}

export default function baseContext(pi: ExtensionAPI): void {
  const state: ExtensionState = {
    current: undefined,
    last: undefined,
    link: new DaemonLink({
      env: process.env,
      prepare: (client) => lendModel(client, () => state.current, () => pi.getThinkingLevel()),
      projectDir: () => state.current?.cwd ?? process.cwd(),
      clientVersion: "pi-extension/0.1.0",
    }),
  };

  pi.on("session_start", (_event, ctx) => {
    state.current = ctx;
    // A report belongs to the session it was made in (after /new or /resume, not this one's).
    ctx.ui.setStatus(UI_KEY, undefined);
    ctx.ui.setWidget(UI_KEY, undefined);
    // Started now, the daemon has loaded its plugins by the first compaction. A failure here is
    // only reported when a summary is needed (the next attempt may succeed).
    void state.link.client().catch(() => undefined);
  });
  pi.on("model_select", (_event, ctx) => {
    state.current = ctx;
  });
  pi.on("session_shutdown", async () => {
    await state.link.close();
  });
  pi.on("session_before_compact", (event, ctx) => compactWithDaemon(state, event, ctx));
  pi.on("session_before_tree", (event, ctx) => summarizeBranchWithDaemon(state, event, ctx));
  registerCommands(pi, state);
}

/** pi's compaction, summarized by the daemon (undefined: pi compacts by itself). */
async function compactWithDaemon(state: ExtensionState, event: SessionBeforeCompactEvent, ctx: ExtensionContext) {
  const { preparation, signal } = event;
  // pi's messages and entries are sent as they are: the protocol declares pi's shapes (the casts
  // only bridge pi's and the protocol's TypeScript types), and the daemon validates them.
  const result = await summarize(state, ctx, signal, "compaction", (client) =>
    client.request(
      SummarizeCompaction,
      {
        messagesToSummarize: preparation.messagesToSummarize as never,
        turnPrefixMessages: preparation.turnPrefixMessages as never,
        ...(preparation.previousSummary !== undefined ? { previousSummary: preparation.previousSummary } : {}),
        fileOps: fileListsOf(preparation.fileOps),
        ...(event.customInstructions !== undefined ? { customInstructions: event.customInstructions } : {}),
        firstKeptEntryId: preparation.firstKeptEntryId,
        tokensBefore: Math.max(0, Math.round(preparation.tokensBefore)),
        branchEntries: event.branchEntries as never,
        settings: { reserveTokens: preparation.settings.reserveTokens, keepRecentTokens: preparation.settings.keepRecentTokens },
        // pi's model's window: the daemon says when pi's settings cannot fit it.
        ...(ctx.model?.contextWindow ? { contextWindow: ctx.model.contextWindow } : {}),
        projectDir: ctx.cwd,
        sessionId: ctx.sessionManager.getSessionId(),
      },
      { signal },
    ),
  );
  if (result === undefined || "cancel" in result) return result;
  return {
    compaction: {
      summary: result.summary,
      firstKeptEntryId: result.firstKeptEntryId ?? preparation.firstKeptEntryId,
      tokensBefore: preparation.tokensBefore,
      details: result.details,
    },
  };
}

/** The summary of the branch pi's `/tree` leaves, written by the daemon (undefined: pi's own, or none asked). */
async function summarizeBranchWithDaemon(state: ExtensionState, event: SessionBeforeTreeEvent, ctx: ExtensionContext) {
  state.current = ctx;
  const { preparation, signal } = event;
  // Without a summary to write, navigation is pi's business alone.
  if (!preparation.userWantsSummary || preparation.entriesToSummarize.length === 0) return undefined;
  const result = await summarize(state, ctx, signal, "branch summary", (client) =>
    client.request(
      SummarizeBranch,
      {
        entries: preparation.entriesToSummarize as never,
        ...(preparation.customInstructions !== undefined ? { customInstructions: preparation.customInstructions } : {}),
        ...(preparation.replaceInstructions !== undefined ? { replaceInstructions: preparation.replaceInstructions } : {}),
        ...(ctx.model?.contextWindow ? { contextWindow: ctx.model.contextWindow } : {}),
        targetId: preparation.targetId,
        oldLeafId: preparation.oldLeafId,
        commonAncestorId: preparation.commonAncestorId,
        ...(preparation.label !== undefined ? { label: preparation.label } : {}),
        projectDir: ctx.cwd,
        sessionId: ctx.sessionManager.getSessionId(),
      },
      { signal },
    ),
  );
  if (result === undefined || "cancel" in result) return result;
  return { summary: { summary: result.summary, details: result.details } };
}

/** `/bc-navigate` (for pi's headless modes, which have no `/tree`) and `/bc-status`. */
function registerCommands(pi: ExtensionAPI, state: ExtensionState): void {
  /** Moves to an entry with a summary of the branch left, written by Base Context. */
  pi.registerCommand("bc-navigate", {
    description: "Navigate to an entry, summarizing the branch left (Base Context): /bc-navigate <entryId> [label]",
    handler: async (args, ctx) => {
      const [targetId, ...label] = args.trim().split(/\s+/);
      if (!targetId) {
        ctx.ui.notify("Usage: /bc-navigate <entryId> [label]", "warning");
        return;
      }
      if (!ctx.sessionManager.getEntry(targetId)) {
        ctx.ui.notify(`No entry ${targetId} in this session`, "warning");
        return;
      }
      await ctx.navigateTree(targetId, { summarize: true, ...(label.length > 0 ? { label: label.join(" ") } : {}) });
    },
  });
  /** The daemon (running, version, store) and the last summary's writer and retention. */
  pi.registerCommand("bc-status", {
    description: "Base Context: the daemon, and who wrote the last summary with what it kept",
    handler: async (_args, ctx) => {
      state.current = ctx;
      ctx.ui.notify((await statusLines(state.link, state.last)).join("\n"), "info");
    },
  });
}

/**
 * The report in the footer (always) and, when it needs attention, in the widget above the
 * editor; both survive pi's chat rebuild and stay until the next summary replaces them.
 */
function show(state: ExtensionState, ctx: ExtensionContext, report: SummaryReport): void {
  state.last = report;
  ctx.ui.setStatus(UI_KEY, statusLine(report));
  ctx.ui.setWidget(UI_KEY, attentionLines(report));
}

/** A plugin vetoed it: pi ends the operation as cancelled without rebuilding the chat, so a notification stays. */
function cancelledByPlugin(ctx: ExtensionContext, kind: SummaryKind, message: string): void {
  ctx.ui.notify(`Base Context: ${kind} ${message}`, "info");
  ctx.ui.setStatus(UI_KEY, `Base Context: ${kind} ${message}`);
  ctx.ui.setWidget(UI_KEY, undefined);
}

/**
 * A summary written by the daemon, already shown in the footer; `CANCEL` (pi's answer to end the
 * operation) when the user or a plugin cancelled it; undefined when pi should summarize by itself.
 */
async function summarize(
  state: ExtensionState,
  ctx: ExtensionContext,
  signal: AbortSignal,
  what: SummaryKind,
  request: (client: BaseContextClient) => Promise<SummarizeResult>,
): Promise<(SummarizeResult & { summary: string }) | typeof CANCEL | undefined> {
  state.current = ctx;
  const result = await ask(state, ctx, signal, what, request);
  if (result === "cancelled" || signal.aborted) return CANCEL;
  if (result === undefined) return undefined;
  if (result.status === "cancelled") {
    cancelledByPlugin(ctx, what, result.message);
    return CANCEL;
  }
  show(state, ctx, reportOf(what, result));
  return { ...result, summary: result.summary! };
}

/**
 * The daemon's answer; `"cancelled"` when pi aborted (the user cancelled); undefined, with a
 * warning, when the daemon failed or could not be reached (pi then summarizes by itself).
 */
async function ask(
  state: ExtensionState,
  ctx: ExtensionContext,
  signal: AbortSignal,
  what: SummaryKind,
  request: (client: BaseContextClient) => Promise<SummarizeResult>,
): Promise<SummarizeResult | "cancelled" | undefined> {
  const { link } = state;
  const attempt = () => withTimeout(link.client().then(request), SUMMARY_TIMEOUT_MS, `no answer within ${Math.round(SUMMARY_TIMEOUT_MS / 1000)} s`);
  try {
    try {
      return await attempt();
    } catch (error) {
      if (signal.aborted || !connectionLost(error)) throw error;
      // The daemon went away since the last request (restarted, killed): one fresh connection.
      await link.close();
      return await attempt();
    }
  } catch (error) {
    if (signal.aborted || (error as { code?: unknown }).code === ErrorCodes.RequestCancelled) return "cancelled";
    const why = error instanceof Error ? error.message : String(error);
    // One warning, where it stays: a notification would be wiped by the rebuild after pi's own compaction.
    show(state, ctx, failureReport(what, link.describe(), why));
    return undefined;
  }
}

/** The connection broke (closed, daemon gone) rather than the daemon answering with an error. */
function connectionLost(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code !== "number" || code === PENDING_RESPONSE_REJECTED;
}

/** vscode-jsonrpc's code for requests pending when the connection closed. */
const PENDING_RESPONSE_REJECTED = -32097;

function positiveOr(value: number, fallback: number): number {
  return Number.isFinite(value) && value > 0 ? value : fallback;
}
