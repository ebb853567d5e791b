/**
 * The Session Tree view: a session's entries as `session/tree` returns them (flat), in a VS Code
 * tree. A stretch without branches stays at one level; where the conversation branches, each
 * branch is a row of its own that opens onto its entries (the branch holding the current leaf
 * open, the others closed), so only real branch points indent. Compactions and branch summaries
 * say what they replaced and what their summary kept and lost (the retention line); labels and the
 * current leaf are marked.
 *
 * The entry previews, replaced counts and filters are the CLI tree's (`@base-context/daemon/views`).
 */
import type { FlatTreeNode, RetentionReport as Report } from "@base-context/protocol";
import { formatRetention, PROBE_KINDS } from "@base-context/core";
import {
  childrenByParent,
  entryPreview,
  filterTree,
  replacedCounts,
  retentionOf,
  rootsOf,
  subtreeSizes,
  type EntryKind,
  type TreeFilter,
} from "@base-context/daemon/views";
import type { z } from "zod";
import { escapeMarkdown, fenced, oneLine, plural } from "./format.js";
import type { ViewItem } from "./view-item.js";

export type FlatNode = z.infer<typeof FlatTreeNode>;
export type { TreeFilter };

export interface TreeViewInput {
  sessionId: string;
  nodes: readonly FlatNode[];
  filter?: TreeFilter | undefined;
}

const ICONS: Record<EntryKind, string> = {
  user: "account",
  assistant: "hubot",
  "tool result": "tools",
  "tool error": "error",
  bash: "terminal",
  custom: "extensions",
  "custom message": "extensions",
  pruned: "eye-closed",
  "plugin data": "plug",
  model: "server-environment",
  "thinking level": "lightbulb",
  label: "tag",
  "session name": "symbol-string",
  compaction: "fold",
  "branch summary": "git-merge",
};

const AGENT_NAMES: Record<string, string> = { "claude-code": "Claude Code", codex: "Codex" };

/** Rows of the tree, top level first; branch rows carry their entries as children. */
export function treeView(input: TreeViewInput): ViewItem[] {
  const replaced = replacedCounts(input.nodes);
  const nodes = input.filter ? filterTree(input.nodes, { filter: input.filter }) : [...input.nodes];
  const children = childrenByParent(nodes);
  const sizes = subtreeSizes(nodes, children);
  const leafPath = pathToLeaf(nodes);
  const build = (start: FlatNode): ViewItem[] => {
    const rows: ViewItem[] = [];
    // A chain: each entry with one child is followed by that child at the same level.
    let node: FlatNode | undefined = start;
    while (node) {
      rows.push(entryItem(input.sessionId, node, replaced));
      const kids: FlatNode[] = children.get(node.entry.id) ?? [];
      if (kids.length === 1) {
        node = kids[0];
        continue;
      }
      kids.forEach((kid, index) => rows.push(branchItem(input.sessionId, kid, index, kids.length, sizes, leafPath, build)));
      node = undefined;
    }
    return rows;
  };
  const roots = rootsOf(nodes);
  if (roots.length === 1) return build(roots[0]!);
  return roots.map((root, index) => branchItem(input.sessionId, root, index, roots.length, sizes, leafPath, build));
}

/** Ids from the leaf up to its root (the leaf's branch is the one shown open). */
function pathToLeaf(nodes: readonly FlatNode[]): Set<string> {
  const byId = new Map(nodes.map((node) => [node.entry.id, node] as const));
  const path = new Set<string>();
  let current = nodes.find((node) => node.isLeaf === true);
  while (current && !path.has(current.entry.id)) {
    path.add(current.entry.id);
    current = current.entry.parentId === null ? undefined : byId.get(current.entry.parentId);
  }
  return path;
}

function branchItem(
  sessionId: string,
  start: FlatNode,
  index: number,
  count: number,
  sizes: ReadonlyMap<string, number>,
  leafPath: ReadonlySet<string>,
  build: (start: FlatNode) => ViewItem[],
): ViewItem {
  const { kind, text } = entryPreview(start.entry);
  const holdsLeaf = leafPath.has(start.entry.id);
  const size = sizes.get(start.entry.id) ?? 1;
  const description = [plural(size, "entry", "entries"), ...(holdsLeaf ? ["● current branch"] : [])].join(" · ");
  const label = `Branch ${index + 1}/${count}: ${oneLine(text || kind, 100)}`;
  return {
    id: `${sessionId}/branch/${start.entry.id}`,
    label,
    description,
    icon: { id: "git-branch", ...(holdsLeaf ? { color: "charts.green" } : {}) },
    contextValue: "branch",
    collapsible: holdsLeaf ? "expanded" : "collapsed",
    tooltip: `**Branch ${index + 1} of ${count}**, from entry \`${start.entry.id}\`: ${plural(size, "entry", "entries")}` +
      (holdsLeaf ? ", holds the current leaf" : ""),
    accessibilityLabel: `branch ${index + 1} of ${count}, ${description}: ${oneLine(text || kind, 100)}`,
    children: build(start),
  };
}

function entryItem(sessionId: string, node: FlatNode, replaced: ReadonlyMap<string, number>): ViewItem {
  const { entry } = node;
  const { kind, text } = entryPreview(entry);
  const summary = summaryFacts(node, replaced);
  const parts: string[] = [];
  if (node.isLeaf) parts.push("● current leaf");
  if (node.label !== undefined) parts.push(`🏷 ${node.label}`);
  parts.push(kind);
  if (summary?.replaced !== undefined) parts.push(`replaced ${plural(summary.replaced, "entry", "entries")}`);
  if (summary?.line !== undefined) parts.push(summary.line);
  const label = oneLine(text, 160) || kind;
  return {
    id: `${sessionId}/${entry.id}`,
    label,
    description: parts.join(" · "),
    tooltip: entryTooltip(node, kind, text, summary),
    icon: node.isLeaf ? { id: "debug-stackframe", color: "charts.green" } : { id: ICONS[kind], ...(summary?.lost ? { color: "charts.yellow" } : {}) },
    contextValue: node.isLeaf ? "entry.leaf" : "entry",
    collapsible: "none",
    accessibilityLabel: `${kind} ${entry.id}: ${oneLine(text, 100)}. ${parts.filter((part) => part !== kind).join(", ")}`,
  };
}

interface SummaryFacts {
  /** Entries the summary stands for. */
  replaced?: number;
  /** "kept 16/16 files, 2/2 errors, …" (with whose summary it was, when another agent wrote it). */
  line?: string;
  report?: Report;
  lost: boolean;
  summary: string;
}

/** What a compaction or branch summary replaced and kept; undefined for other entries. */
export function summaryFacts(node: FlatNode, replaced: ReadonlyMap<string, number>): SummaryFacts | undefined {
  const { entry } = node;
  if (entry.type !== "compaction" && entry.type !== "branch_summary") return undefined;
  const report = retentionOf(entry.details);
  const source = typeof entry.details === "object" && entry.details !== null ? (entry.details as { source?: unknown }).source : undefined;
  const agent = typeof source === "string" ? AGENT_NAMES[source] : undefined;
  const facts: SummaryFacts = { lost: report !== undefined && lostCount(report) > 0, summary: entry.summary };
  const count = replaced.get(entry.id);
  if (count !== undefined) facts.replaced = count;
  if (report) {
    facts.report = report;
    facts.line = `${agent ? `${agent}'s summary ` : ""}${formatRetention(report)}`;
  }
  return facts;
}

export function lostCount(report: Report): number {
  return PROBE_KINDS.reduce((sum, kind) => sum + report[kind].total - report[kind].kept, 0);
}

/** The items a summary lost, kind by kind, as Markdown list lines. */
export function lostLines(report: Report): string[] {
  return PROBE_KINDS.flatMap((kind) => report.missing[kind].map((item) => `- ${kind}: ${escapeMarkdown(oneLine(item, 200))}`));
}

const TOOLTIP_TEXT = 2000;

function entryTooltip(node: FlatNode, kind: EntryKind, text: string, summary: SummaryFacts | undefined): string {
  const { entry } = node;
  const head = [`**${kind}** \`${entry.id}\` · ${entry.timestamp}`];
  if (node.isLeaf) head.push("**current leaf**: the context is built up to here");
  if (node.label !== undefined) head.push(`label: ${escapeMarkdown(node.label)}`);
  if (!summary) return [...head, "", fenced(cut(text, TOOLTIP_TEXT))].join("\n\n");
  const lines = [...head];
  if (summary.replaced !== undefined) lines.push(`replaced ${plural(summary.replaced, "entry", "entries")}`);
  if (summary.line !== undefined) lines.push(`retention: ${summary.line}`);
  if (summary.report && summary.lost) lines.push(`lost:\n${lostLines(summary.report).slice(0, 10).join("\n")}`);
  lines.push(fenced(cut(summary.summary, TOOLTIP_TEXT)));
  return lines.join("\n\n");
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
