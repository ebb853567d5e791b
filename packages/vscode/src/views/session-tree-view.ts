/**
 * The Session Tree view: the open session's entries (`session/tree`, flat), redrawn when the
 * session changes, with a filter (user messages, labelled entries, summaries).
 */
import * as vscode from "vscode";
import { SessionTree } from "@base-context/protocol";
import { treeView, type FlatNode, type TreeFilter } from "../models/tree-model.js";
import type { ViewItem } from "../models/view-item.js";
import type { ExtensionState } from "../state.js";
import { ModelTree } from "./model-tree.js";

const FILTER_NAMES: Record<TreeFilter, string> = { user: "user messages", labelled: "labelled entries", summaries: "compactions and summaries" };

export class SessionTreeView implements vscode.Disposable {
  readonly provider = new ModelTree();
  readonly view: vscode.TreeView<ViewItem>;
  private filter: TreeFilter | undefined;
  private nodes: FlatNode[] = [];
  private leafId: string | null = null;
  /** The session whose tree is shown (to tell a newly opened one from a refresh). */
  private shownSession: string | undefined;
  private loading: Promise<void> | undefined;
  private again = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly state: ExtensionState) {
    this.view = vscode.window.createTreeView("baseContext.tree", { treeDataProvider: this.provider, showCollapseAll: true });
    this.disposables.push(
      this.view,
      this.provider,
      state.onDidOpen(() => void this.refresh()),
      state.onDidChangeSession((id) => id === state.openSessionId && void this.refresh()),
    );
  }

  get currentLeaf(): string | null {
    return this.leafId;
  }

  /** The entry a command acts on: the one given (a row), else the selected row. */
  entryOf(argument: unknown): { sessionId: string; entryId: string } | undefined {
    const item = (argument as ViewItem | undefined) ?? this.view.selection[0];
    const sessionId = this.state.openSessionId;
    if (!item || sessionId === undefined || !item.contextValue?.startsWith("entry")) return undefined;
    return { sessionId, entryId: item.id.slice(sessionId.length + 1) };
  }

  /** The entries of the open session, for a quick pick when a command has no row. */
  get entries(): readonly FlatNode[] {
    return this.nodes;
  }

  setFilter(filter: TreeFilter | undefined): void {
    this.filter = filter;
    void this.refresh();
  }

  /** Loads the open session's tree again; calls while one loads coalesce into one more load. */
  refresh(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = this.load().finally(() => {
      this.loading = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.loading;
  }

  private async reveal(id: string): Promise<void> {
    const item = this.provider.find(id);
    if (!item || !this.view.visible) return;
    try {
      await this.view.reveal(item, { select: false, focus: false, expand: true });
    } catch {
      // The view was hidden or redrawn meanwhile: nothing to show.
    }
  }

  private async load(): Promise<void> {
    const sessionId = this.state.openSessionId;
    if (sessionId === undefined) {
      this.shownSession = undefined;
      this.nodes = [];
      this.provider.set([]);
      this.view.description = undefined;
      this.view.message = undefined;
      return;
    }
    try {
      const daemon = await this.state.daemon.ready();
      const tree = await daemon.request(SessionTree, { sessionId, flat: true });
      if (sessionId !== this.state.openSessionId) return;
      const moved = sessionId !== this.shownSession || tree.leafId !== this.leafId;
      this.nodes = tree.nodes ?? [];
      this.leafId = tree.leafId;
      this.shownSession = sessionId;
      this.provider.set(treeView({ sessionId, nodes: this.nodes, filter: this.filter }));
      // A session opened, or its leaf moved: show where it is now (the newest work, usually at the end).
      if (moved && tree.leafId !== null) await this.reveal(`${sessionId}/${tree.leafId}`);
      this.view.description = this.state.title(sessionId);
      this.view.message = this.filter ? `Showing ${FILTER_NAMES[this.filter]} only (and the current leaf).` : undefined;
    } catch (error) {
      this.view.message = `Could not load the tree: ${(error as Error).message}`;
    }
  }

  dispose(): void {
    for (const disposable of this.disposables) disposable.dispose();
  }
}

export { FILTER_NAMES };
