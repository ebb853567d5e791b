/**
 * One TreeDataProvider for every view of the extension: the view's model (a pure function of the
 * daemon's answers, models/*.ts) gives ViewItems, and this turns them into VS Code tree items.
 */
import * as vscode from "vscode";
import type { ViewItem } from "../models/view-item.js";

const COLLAPSIBLE: Record<ViewItem["collapsible"], vscode.TreeItemCollapsibleState> = {
  none: vscode.TreeItemCollapsibleState.None,
  collapsed: vscode.TreeItemCollapsibleState.Collapsed,
  expanded: vscode.TreeItemCollapsibleState.Expanded,
};

export class ModelTree implements vscode.TreeDataProvider<ViewItem> {
  private roots: ViewItem[] = [];
  private readonly parents = new Map<string, ViewItem>();
  private readonly changed = new vscode.EventEmitter<ViewItem | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  /** Shows new items (the whole view is refreshed; VS Code keeps expansion and selection by id). */
  set(items: ViewItem[]): void {
    this.roots = items;
    this.parents.clear();
    const walk = (parent: ViewItem) => {
      for (const child of parent.children ?? []) {
        this.parents.set(child.id, parent);
        walk(child);
      }
    };
    for (const root of items) walk(root);
    this.changed.fire(undefined);
  }

  get items(): readonly ViewItem[] {
    return this.roots;
  }

  /** The item with this id, wherever it is. */
  find(id: string): ViewItem | undefined {
    const search = (items: readonly ViewItem[]): ViewItem | undefined => {
      for (const item of items) {
        if (item.id === id) return item;
        const found = search(item.children ?? []);
        if (found) return found;
      }
      return undefined;
    };
    return search(this.roots);
  }

  getTreeItem(item: ViewItem): vscode.TreeItem {
    const tree = new vscode.TreeItem(item.label, COLLAPSIBLE[item.collapsible]);
    tree.id = item.id;
    if (item.description !== undefined) tree.description = item.description;
    if (item.tooltip !== undefined) tree.tooltip = new vscode.MarkdownString(item.tooltip);
    if (item.icon) tree.iconPath = new vscode.ThemeIcon(item.icon.id, item.icon.color ? new vscode.ThemeColor(item.icon.color) : undefined);
    if (item.contextValue !== undefined) tree.contextValue = item.contextValue;
    if (item.command) tree.command = item.command;
    if (item.accessibilityLabel !== undefined) tree.accessibilityInformation = { label: item.accessibilityLabel };
    return tree;
  }

  getChildren(item?: ViewItem): ViewItem[] {
    return item ? (item.children ?? []) : this.roots;
  }

  getParent(item: ViewItem): ViewItem | undefined {
    return this.parents.get(item.id);
  }

  dispose(): void {
    this.changed.dispose();
  }
}
