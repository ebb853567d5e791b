/**
 * "What the model sees" as read-only documents (`base-context-context:` URIs): the context of a
 * session's current leaf, kept current as the session changes, or the context as it was at an
 * entry (fixed). Also the compaction reports "Compact Now" offers.
 */
import * as vscode from "vscode";
import { ContextBuild, EntryGet, SessionGet, type BaseContextClient } from "@base-context/protocol";
import { retentionOf } from "@base-context/daemon/views";
import { contextDocument } from "../models/context-model.js";
import type { ExtensionState } from "../state.js";

export const CONTEXT_SCHEME = "base-context-context";
export const REPORT_SCHEME = "base-context-report";

const AGENT_NAMES: Record<string, string> = { "claude-code": "Claude Code", codex: "Codex" };

export class ContextDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly reports = new Map<string, string>();
  private readonly disposables: vscode.Disposable[] = [];
  private nextReport = 1;

  constructor(private readonly state: ExtensionState) {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(CONTEXT_SCHEME, this),
      vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, {
        provideTextDocumentContent: (uri) => this.reports.get(uri.path) ?? "",
      }),
      state.onDidChangeSession((sessionId) => this.sessionChanged(sessionId)),
      this.changed,
    );
  }

  /** Opens the context of a session (its current leaf, or `leafId`) beside the editor. */
  async show(sessionId: string, leafId?: string): Promise<void> {
    const uri = contextUri(sessionId, this.state.title(sessionId), leafId);
    const document = await vscode.languages.setTextDocumentLanguage(await vscode.workspace.openTextDocument(uri), "markdown");
    await vscode.window.showTextDocument(document, { preview: false, preserveFocus: false });
  }

  /** Opens a Markdown report (a compaction's summary and retention). */
  async showReport(name: string, markdown: string): Promise<void> {
    const path = `/${this.nextReport++}/${name.replace(/[\\/:*?"<>|]+/g, " ").trim() || "report"}.md`;
    this.reports.set(path, markdown);
    const opened = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: REPORT_SCHEME, path }));
    await vscode.window.showTextDocument(await vscode.languages.setTextDocumentLanguage(opened, "markdown"), { preview: false });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const params = new URLSearchParams(uri.query);
    const sessionId = params.get("session");
    if (!sessionId) return "This document names no session.";
    const leaf = params.get("leaf") ?? undefined;
    try {
      return await this.render(await this.state.daemon.ready(), sessionId, leaf);
    } catch (error) {
      return `# What the model sees\n\nThe context could not be built: ${(error as Error).message}\n`;
    }
  }

  private async render(daemon: BaseContextClient, sessionId: string, leaf: string | undefined): Promise<string> {
    const [{ leafId: current }, context] = await Promise.all([
      daemon.request(SessionGet, { sessionId }),
      daemon.request(ContextBuild, { sessionId, messageTokens: true, ...(leaf !== undefined ? { leafId: leaf } : {}) }),
    ]);
    const compaction = context.compactionId
      ? (await daemon.request(EntryGet, { sessionId, entryId: context.compactionId })).entry
      : undefined;
    const details = compaction?.type === "compaction" ? compaction.details : undefined;
    const retention = retentionOf(details);
    const source = typeof details === "object" && details !== null ? (details as { source?: unknown }).source : undefined;
    const summarizedBy = typeof source === "string" ? AGENT_NAMES[source] : undefined;
    return contextDocument({
      sessionId,
      title: this.state.title(sessionId),
      leafId: leaf ?? current,
      atCurrentLeaf: leaf === undefined || leaf === current,
      context,
      ...(retention ? { retention } : {}),
      ...(summarizedBy ? { summarizedBy } : {}),
    });
  }

  /** The open documents of a session's current leaf are built again. */
  private sessionChanged(sessionId: string): void {
    for (const document of vscode.workspace.textDocuments) {
      const { uri } = document;
      if (uri.scheme !== CONTEXT_SCHEME) continue;
      const params = new URLSearchParams(uri.query);
      if (params.get("session") === sessionId && !params.has("leaf")) this.changed.fire(uri);
    }
  }

  dispose(): void {
    for (const disposable of this.disposables) disposable.dispose();
  }
}

function contextUri(sessionId: string, title: string, leafId?: string): vscode.Uri {
  const name = title.replace(/[\\/:*?"<>|#]+/g, " ").trim().slice(0, 60) || sessionId.slice(0, 8);
  const query = new URLSearchParams({ session: sessionId, ...(leafId !== undefined ? { leaf: leafId } : {}) });
  return vscode.Uri.from({
    scheme: CONTEXT_SCHEME,
    path: `/${name}${leafId !== undefined ? ` at ${leafId.slice(0, 8)}` : ""}.md`,
    query: query.toString(),
  });
}
