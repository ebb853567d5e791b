/**
 * The Sessions view: `session/list` pages (this workspace first), `session/search` while a search
 * is on, and `session/didChange` news applied as they come, so sessions other clients write
 * (an agent in a terminal, Claude Code's hook, another window) appear without a reload.
 */
import * as vscode from "vscode";
import { SessionDidChange, SessionList, SessionSearch, SessionWatch, type BaseContextClient } from "@base-context/protocol";
import { applySessionNews, sessionsView, type SearchResults, type Summary } from "../models/sessions-model.js";
import type { ViewItem } from "../models/view-item.js";
import type { ExtensionState } from "../state.js";
import { ModelTree } from "./model-tree.js";

const PAGE = 200;

export class SessionsView implements vscode.Disposable {
  readonly provider = new ModelTree();
  readonly view: vscode.TreeView<ViewItem>;
  private sessions: Summary[] = [];
  private cursor: string | undefined;
  private search: SearchResults | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** Set once the first list arrived: the views then open the workspace's latest session. */
  private loadedOnce = false;

  constructor(private readonly state: ExtensionState) {
    this.view = vscode.window.createTreeView("baseContext.sessions", { treeDataProvider: this.provider, showCollapseAll: true });
    this.disposables.push(
      this.view,
      this.provider,
      state.daemon.onNotification(SessionDidChange, (news) => this.apply(news.changed, news.deleted)),
      state.onDidOpen(() => this.render()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.render()),
    );
    // "3 min ago" ages: redraw now and then.
    const timer = setInterval(() => this.render(), 60_000);
    this.disposables.push({ dispose: () => clearInterval(timer) });
  }

  /** A daemon is ready (at start, or after a restart): list afresh and watch from now on. */
  async connected(client: BaseContextClient): Promise<void> {
    await client.request(SessionWatch, {});
    await this.reload(client);
  }

  async reload(client?: BaseContextClient): Promise<void> {
    const daemon = client ?? (await this.state.daemon.ready());
    const page = await daemon.request(SessionList, { limit: PAGE });
    this.sessions = page.sessions;
    this.cursor = page.nextCursor;
    this.state.remember(page.sessions);
    if (this.search) await this.runSearch(this.search.query, daemon);
    this.render();
    if (!this.loadedOnce) {
      this.loadedOnce = true;
      this.openLatestOfWorkspace();
    }
  }

  async loadMore(): Promise<void> {
    if (this.cursor === undefined) return;
    const daemon = await this.state.daemon.ready();
    const page = await daemon.request(SessionList, { limit: PAGE, cursor: this.cursor });
    const known = new Set(this.sessions.map((session) => session.id));
    this.sessions.push(...page.sessions.filter((session) => !known.has(session.id)));
    this.cursor = page.nextCursor;
    this.state.remember(page.sessions);
    this.render();
  }

  async searchFor(query: string): Promise<void> {
    await this.runSearch(query, await this.state.daemon.ready());
    void vscode.commands.executeCommand("setContext", "baseContext.searching", true);
    this.view.message = undefined;
    this.render();
  }

  clearSearch(): void {
    this.search = undefined;
    void vscode.commands.executeCommand("setContext", "baseContext.searching", false);
    this.render();
  }

  /** The session a command acts on: the one given, else the selected one, else the open one. */
  sessionOf(argument: unknown): string | undefined {
    if (typeof argument === "string") return argument;
    const fromItem = sessionIdOfItem(argument as ViewItem | undefined);
    if (fromItem) return fromItem;
    const selected = sessionIdOfItem(this.view.selection[0]);
    return selected ?? this.state.openSessionId;
  }

  get all(): readonly Summary[] {
    return this.sessions;
  }

  private async runSearch(query: string, daemon: BaseContextClient): Promise<void> {
    const found = await daemon.request(SessionSearch, { query, limit: 100, hits: 3 });
    this.search = { query, results: found.results };
    this.state.remember(found.results.map((result) => result.session));
  }

  /** News from the daemon: changed sessions replace their rows (or join the list), deleted ones leave. */
  private apply(changed: readonly Summary[], deleted: readonly string[]): void {
    this.sessions = applySessionNews(this.sessions, changed, deleted);
    this.state.remember(changed);
    this.render();
    for (const id of deleted) this.state.sessionDeleted(id);
    for (const session of changed) this.state.sessionChanged(session.id);
    if (this.state.openSessionId === undefined) this.openLatestOfWorkspace();
    if (this.search) {
      // A search's ranking is the daemon's: ask again (quietly, the list already shows the news).
      void this.state.daemon
        .ready()
        .then((daemon) => this.runSearch(this.search!.query, daemon))
        .then(
          () => this.render(),
          () => undefined,
        );
    }
  }

  private render(): void {
    this.provider.set(
      sessionsView({
        sessions: this.sessions,
        workspaceFolders: workspaceFolders(),
        now: Date.now(),
        hasMore: this.cursor !== undefined,
        ...(this.search ? { search: this.search } : {}),
        ...(this.state.openSessionId !== undefined ? { openSessionId: this.state.openSessionId } : {}),
      }),
    );
    this.view.description = this.search ? `search: ${this.search.query}` : undefined;
  }

  /** The session an agent in this workspace wrote last: what the other views show until another is opened. */
  private openLatestOfWorkspace(): void {
    const folders = workspaceFolders();
    if (folders.length === 0) return;
    const items = this.provider.find("group:workspace")?.children ?? [];
    const first = items.map((item) => sessionIdOfItem(item)).find((id) => id !== undefined);
    if (first !== undefined) this.state.open(first);
  }

  dispose(): void {
    for (const disposable of this.disposables) disposable.dispose();
  }
}

export function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === "file").map((folder) => folder.uri.fsPath);
}

/** The session a Sessions view row stands for (a session row or a search hit under one). */
export function sessionIdOfItem(item: ViewItem | undefined): string | undefined {
  if (!item) return undefined;
  const args = item.command?.arguments;
  if (item.contextValue === "session" && typeof args?.[0] === "string") return args[0];
  if (item.id.startsWith("hit:") && typeof args?.[0] === "string") return args[0];
  return undefined;
}
