/**
 * What a row of one of the extension's tree views shows, as plain data: the views' models
 * (sessions, session tree, plugins) build these without VS Code, and one adapter
 * (views/model-tree.ts) turns them into VS Code tree items.
 */
export interface ViewItem {
  /** Unique in its view, stable across refreshes (VS Code keeps expansion and selection by it). */
  id: string;
  label: string;
  description?: string;
  /** Markdown. */
  tooltip?: string;
  /** A codicon name (`account`, `git-merge`…), optionally coloured with a theme colour id. */
  icon?: { id: string; color?: string };
  /** What the item is, for menus (`when: viewItem == session`). */
  contextValue?: string;
  collapsible: "none" | "collapsed" | "expanded";
  /** Run on click. */
  command?: { command: string; title: string; arguments?: unknown[] };
  /** Read by screen readers (and the end-to-end test): says what the row is in words. */
  accessibilityLabel?: string;
  children?: ViewItem[];
}
