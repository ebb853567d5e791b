/**
 * "Compact Now": optional instructions, a strategy, then `compaction/run` as a cancellable progress
 * notification fed by the daemon's `$/progress`; cancelling sends `$/cancelRequest` (nothing is
 * written). The result says what happened, who wrote the summary, the tokens before and after and
 * what the summary kept; "Show Summary" opens the full report.
 */
import * as vscode from "vscode";
import { CompactionRun, type CompactionProgress, type CompactionStrategy } from "@base-context/protocol";
import { compactionOutcome } from "../models/compaction-model.js";
import { compactionStrategy, contextWindow } from "../settings.js";
import type { ExtensionState } from "../state.js";
import type { ContextDocuments } from "../views/context-documents.js";
import type { SessionsView } from "../views/sessions-view.js";
import { registerCommand } from "./run-command.js";

let progressTokens = 0;

const STRATEGIES: { label: string; strategy: CompactionStrategy; detail: string }[] = [
  { label: "Auto", strategy: "auto", detail: "prune old tool output when that alone is enough, else summarize" },
  { label: "Summarize", strategy: "summarize", detail: "summarize the old part; keep the recent part verbatim" },
  { label: "Prune", strategy: "prune", detail: "only hide old tool output (no summary, no model call)" },
];

export function registerCompactCommand(state: ExtensionState, sessions: SessionsView, contexts: ContextDocuments): vscode.Disposable {
  return registerCommand(state.log, "baseContext.compactNow", "Compact Now", async (item) => {
    const sessionId = sessions.sessionOf(item);
    if (sessionId === undefined) throw new Error("pick a session in the Sessions view first");
    const instructions = await vscode.window.showInputBox({
      title: `Compact "${state.title(sessionId)}"`,
      prompt: "Instructions for the summary (optional: press Enter for none)",
      placeHolder: "e.g. keep every decision about the database schema",
    });
    if (instructions === undefined) return;
    const strategy = await pickStrategy();
    if (strategy === undefined) return;
    await compact(state, contexts, sessionId, instructions.trim(), strategy);
  });
}

async function pickStrategy(): Promise<CompactionStrategy | undefined> {
  const setting = compactionStrategy();
  if (setting !== "ask") return setting;
  const picked = await vscode.window.showQuickPick(STRATEGIES, { title: "How to compact", placeHolder: "Strategy (baseContext.compaction.strategy)" });
  return picked?.strategy;
}

async function compact(
  state: ExtensionState,
  contexts: ContextDocuments,
  sessionId: string,
  instructions: string,
  strategy: CompactionStrategy,
): Promise<void> {
  const title = state.title(sessionId);
  const daemon = await state.daemon.ready();
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Base Context: compacting "${title}"`, cancellable: true },
    async (progress, token) => {
      const workDoneToken = `vscode-compact-${++progressTokens}`;
      let reported = 0;
      const reports = daemon.onProgress<CompactionProgress>(workDoneToken, (value) => {
        if (value.kind === "end") return;
        const increment = value.percentage !== undefined ? Math.max(0, value.percentage - reported) : undefined;
        if (value.percentage !== undefined) reported = value.percentage;
        progress.report({ ...(value.message ? { message: value.message } : {}), ...(increment !== undefined ? { increment } : {}) });
      });
      const abort = new AbortController();
      const cancel = token.onCancellationRequested(() => abort.abort());
      try {
        return await daemon.request(
          CompactionRun,
          {
            sessionId,
            reason: "manual",
            strategy,
            contextWindow: contextWindow(),
            workDoneToken,
            ...(instructions.length > 0 ? { customInstructions: instructions } : {}),
          },
          { signal: abort.signal },
        );
      } catch (error) {
        if (token.isCancellationRequested) {
          void vscode.window.showInformationMessage(`Base Context: the compaction of "${title}" was cancelled; nothing was written.`);
          return undefined;
        }
        throw error;
      } finally {
        cancel.dispose();
        reports.dispose();
      }
    },
  );
  if (!result) return;
  state.sessionChanged(sessionId);
  const outcome = compactionOutcome(result, title);
  const buttons = outcome.report ? ["Show Summary", "Show What the Model Sees"] : [];
  const show =
    outcome.level === "error"
      ? vscode.window.showErrorMessage
      : outcome.level === "warning"
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  const choice = await show(`Base Context: ${outcome.message}`, ...buttons);
  if (choice === "Show Summary" && outcome.report) await contexts.showReport(`Compaction of ${title}`, outcome.report);
  if (choice === "Show What the Model Sees") await contexts.show(sessionId);
}
