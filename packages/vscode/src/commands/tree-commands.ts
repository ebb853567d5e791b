/**
 * The Session Tree view's commands: navigate to an entry (with or without a summary of the branch
 * left, `tree/navigate`, cancellable), label an entry, fork the session there, filter the tree, and
 * show what the model would see at an entry.
 */
import * as vscode from "vscode";
import { LabelSet, SessionFork, TreeNavigate, type TreeNavigateProgress } from "@base-context/protocol";
import { formatRetention } from "@base-context/core";
import { entryPreview } from "@base-context/daemon/views";
import { oneLine } from "../models/format.js";
import { contextWindow } from "../settings.js";
import type { ExtensionState } from "../state.js";
import type { ContextDocuments } from "../views/context-documents.js";
import { FILTER_NAMES, type SessionTreeView } from "../views/session-tree-view.js";
import type { TreeFilter } from "../models/tree-model.js";
import { registerCommand } from "./run-command.js";

export interface TreeCommandDeps {
  state: ExtensionState;
  tree: SessionTreeView;
  contexts: ContextDocuments;
}

let progressTokens = 0;

export function registerTreeCommands(deps: TreeCommandDeps): vscode.Disposable[] {
  const { state, tree, contexts } = deps;
  const command = (id: string, title: string, run: (...args: unknown[]) => unknown) => registerCommand(state.log, id, title, run);
  return [
    command("baseContext.navigate", "Navigate", async (item) => navigate(deps, await pickEntry(deps, item, "Navigate to which entry?"), false)),
    command("baseContext.navigateWithSummary", "Navigate with a Branch Summary", async (item) =>
      navigate(deps, await pickEntry(deps, item, "Navigate to which entry (the branch left is summarized)?"), true),
    ),
    command("baseContext.labelEntry", "Label Entry", async (item) => label(deps, await pickEntry(deps, item, "Label which entry?"))),
    command("baseContext.forkSession", "Fork Session", async (item) => fork(deps, await pickEntry(deps, item, "Fork the session at which entry?"))),
    command("baseContext.showContextHere", "Show What the Model Sees", async (item) => {
      const target = await pickEntry(deps, item, "Show the context at which entry?");
      if (target) await contexts.show(target.sessionId, target.entryId);
    }),
    command("baseContext.filterTree", "Filter Session Tree", async () => {
      const choices: { label: string; filter: TreeFilter | undefined }[] = [
        { label: "All entries", filter: undefined },
        ...(Object.entries(FILTER_NAMES) as [TreeFilter, string][]).map(([filter, name]) => ({ label: `Only ${name}`, filter })),
      ];
      const picked = await vscode.window.showQuickPick(choices, { title: "Filter the session tree" });
      if (picked) tree.setFilter(picked.filter);
    }),
    command("baseContext.refreshTree", "Refresh Session Tree", () => tree.refresh()),
  ];
}

interface Target {
  sessionId: string;
  entryId: string;
}

/** The entry a command acts on: its row, the selected row, or one picked from a list. */
async function pickEntry(deps: TreeCommandDeps, item: unknown, title: string): Promise<Target | undefined> {
  const given = deps.tree.entryOf(item);
  if (given) return given;
  const sessionId = deps.state.openSessionId;
  if (sessionId === undefined) throw new Error("open a session in the Sessions view first");
  const picks = [...deps.tree.entries].reverse().map((node) => {
    const { kind, text } = entryPreview(node.entry);
    return {
      label: oneLine(text, 100) || kind,
      description: `${kind} · ${node.entry.id}${node.isLeaf ? " · current leaf" : ""}${node.label ? ` · ${node.label}` : ""}`,
      entryId: node.entry.id,
    };
  });
  const picked = await vscode.window.showQuickPick(picks, { title, matchOnDescription: true });
  return picked ? { sessionId, entryId: picked.entryId } : undefined;
}

async function navigate(deps: TreeCommandDeps, target: Target | undefined, summarize: boolean): Promise<void> {
  if (!target) return;
  const { state } = deps;
  let customInstructions: string | undefined;
  if (summarize) {
    customInstructions = await vscode.window.showInputBox({
      title: "Summarize the branch you leave",
      prompt: "Instructions for the branch summary (optional: press Enter for none)",
      placeHolder: "e.g. say why this approach was dropped",
    });
    if (customInstructions === undefined) return;
  }
  const daemon = await state.daemon.ready();
  const title = state.title(target.sessionId);
  const result = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: summarize ? `Base Context: summarizing the branch left in "${title}"` : `Base Context: moving "${title}"`,
      cancellable: summarize,
    },
    async (progress, token) => {
      const workDoneToken = `vscode-navigate-${++progressTokens}`;
      const reports = daemon.onProgress<TreeNavigateProgress>(workDoneToken, (value) => {
        if (value.kind !== "end" && value.message) progress.report({ message: value.message });
      });
      const abort = new AbortController();
      const cancel = token.onCancellationRequested(() => abort.abort());
      try {
        return await daemon.request(
          TreeNavigate,
          {
            sessionId: target.sessionId,
            targetId: target.entryId,
            summarize,
            contextWindow: contextWindow(),
            workDoneToken,
            ...(customInstructions?.trim() ? { customInstructions: customInstructions.trim() } : {}),
          },
          { signal: abort.signal },
        );
      } finally {
        cancel.dispose();
        reports.dispose();
      }
    },
  );
  state.sessionChanged(target.sessionId);
  if (result.status === "moved") {
    const kept = result.retention ? ` Its summary ${formatRetention(result.retention)}.` : "";
    const summary = result.summaryEntry ? ` The branch left was summarized (entry ${result.summaryEntry.id}).${kept}` : "";
    if (result.editorText !== undefined) await vscode.env.clipboard.writeText(result.editorText);
    const edit = result.editorText !== undefined ? " The message you went back to is on the clipboard, to send again as it is or changed." : "";
    void vscode.window.showInformationMessage(`Base Context: "${title}" is now at ${result.leafId ?? "its start"}.${summary}${edit}`);
  } else if (result.status === "unchanged") {
    void vscode.window.showInformationMessage(`Base Context: that entry is already the current leaf of "${title}".`);
  } else {
    void vscode.window.showWarningMessage(`Base Context: "${title}" did not move (${result.status})${result.message ? `: ${result.message}` : ""}.`);
  }
}

async function label(deps: TreeCommandDeps, target: Target | undefined): Promise<void> {
  if (!target) return;
  const current = deps.tree.entries.find((node) => node.entry.id === target.entryId)?.label;
  const text = await vscode.window.showInputBox({
    title: `Label entry ${target.entryId}`,
    value: current ?? "",
    prompt: "A bookmark for this entry (empty: remove its label). The session does not move.",
  });
  if (text === undefined) return;
  const daemon = await deps.state.daemon.ready();
  await daemon.request(LabelSet, {
    sessionId: target.sessionId,
    targetId: target.entryId,
    label: text.trim().length > 0 ? text.trim() : null,
  });
  deps.state.sessionChanged(target.sessionId);
}

async function fork(deps: TreeCommandDeps, target: Target | undefined): Promise<void> {
  if (!target) return;
  const daemon = await deps.state.daemon.ready();
  const { session } = await daemon.request(SessionFork, { sessionId: target.sessionId, entryId: target.entryId });
  await vscode.commands.executeCommand("baseContext.refreshSessions");
  deps.state.open(session.id);
  void vscode.window.showInformationMessage(
    `Base Context: forked "${deps.state.title(target.sessionId)}" at ${target.entryId} into a new session (${session.id}), now open.`,
  );
}
