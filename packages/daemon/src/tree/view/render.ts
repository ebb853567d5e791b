/**
 * The session tree for a terminal (`base-context tree`): one line per entry, Unicode box lines
 * where the conversation branches, the current leaf, labels, compactions and branch summaries
 * marked, and long linear stretches folded.
 *
 * Pure (nodes in, text out) so it can be snapshot-tested. Renders from the FLAT node list of
 * `session/tree` (nested JSON cannot carry deep sessions) and never recurses: a linear stretch
 * stays in one column however long it is, and only real branch points indent.
 */
import type { FlatTreeNode } from "@base-context/protocol";
import type { z } from "zod";
import { entryPreview, type EntryKind } from "./preview.js";

export type FlatNode = z.infer<typeof FlatTreeNode>;

export interface RenderTreeOptions {
  /** Show every entry: no folding. */
  all?: boolean;
  /** ANSI colours (the caller decides: a TTY without NO_COLOR). */
  color?: boolean;
  /** Cut lines to this many columns (previews shrink first); default: no limit. */
  width?: number;
}

/** A stretch of plain entries keeps this many at each end visible when folded. */
export const FOLD_KEEP_HEAD = 2;
export const FOLD_KEEP_TAIL = 2;
/** Fewer hidden entries than this are shown instead: a fold line must save lines. */
export const FOLD_MIN_HIDDEN = 3;

const ANSI = { reset: "\x1b[0m", bold: "\x1b[1m", dim: "\x1b[2m", red: "\x1b[31m", green: "\x1b[32m", yellow: "\x1b[33m", magenta: "\x1b[35m", cyan: "\x1b[36m" } as const;
type Style = keyof typeof ANSI;

const KIND_STYLE: Partial<Record<EntryKind, Style>> = {
  user: "bold",
  "tool error": "red",
  compaction: "magenta",
  "branch summary": "cyan",
  label: "dim",
  model: "dim",
  "thinking level": "dim",
  "session name": "dim",
  "plugin data": "dim",
};

/** Shortest preview kept when a line is cut to the width. */
const MIN_PREVIEW = 16;

interface Chain {
  /** The chain's first node. */
  start: FlatNode;
  /** Prefix of the chain's first line (with its branch connector). */
  lead: string;
  /** Prefix of every other line of the chain and of its branches. */
  indent: string;
}

export function renderTree(nodes: readonly FlatNode[], options: RenderTreeOptions = {}): string {
  if (nodes.length === 0) return "(empty session)\n";
  const children = childrenByParent(nodes);
  const ids = new Set(nodes.map((node) => node.entry.id));
  // An entry whose parent is missing is shown as a root, as pi shows orphans.
  const roots = nodes.filter((node) => node.entry.parentId === null || !ids.has(node.entry.parentId));
  const style = styler(options.color === true);
  const lines: string[] = [];

  // Depth-first over chains (maximal runs where each node has one child), with an explicit stack.
  const stack: Chain[] = branchesOf(roots, "", roots.length > 1).reverse();
  while (stack.length > 0) {
    const { start, lead, indent } = stack.pop()!;
    const chain = [start];
    for (let kids = children.get(start.entry.id); kids?.length === 1; kids = children.get(chain[chain.length - 1]!.entry.id)) {
      chain.push(kids[0]!);
    }
    for (const [index, item] of foldChain(chain, options.all === true).entries()) {
      const prefix = style("dim", index === 0 ? lead : indent);
      lines.push(prefix + (typeof item === "number" ? style("dim", `… ${item} more entries …`) : nodeLine(item, visibleLength(index === 0 ? lead : indent), options, style)));
    }
    const end = chain[chain.length - 1]!;
    stack.push(...branchesOf(children.get(end.entry.id) ?? [], indent, true).reverse());
  }
  return `${lines.join("\n")}\n`;
}

function childrenByParent(nodes: readonly FlatNode[]): Map<string, FlatNode[]> {
  const children = new Map<string, FlatNode[]>();
  for (const node of nodes) {
    const parentId = node.entry.parentId;
    if (parentId === null) continue;
    const siblings = children.get(parentId);
    if (siblings) siblings.push(node);
    else children.set(parentId, [node]);
  }
  return children;
}

/** Chains for the children of a branch point (in time order), each with its connector. */
function branchesOf(starts: readonly FlatNode[], indent: string, connect: boolean): Chain[] {
  if (!connect) return starts.map((start) => ({ start, lead: indent, indent }));
  return starts.map((start, index) => {
    const last = index === starts.length - 1;
    return { start, lead: indent + (last ? "└─ " : "├─ "), indent: indent + (last ? "   " : "│  ") };
  });
}

/** Entries a reader looks for: never folded away. */
function isLandmark(node: FlatNode): boolean {
  return node.isLeaf === true || node.label !== undefined || node.entry.type === "compaction" || node.entry.type === "branch_summary";
}

/**
 * The chain's lines: nodes, and numbers standing for folded stretches. The first and last node
 * (where the chain starts and where it ends or branches) and landmarks always show.
 */
function foldChain(chain: readonly FlatNode[], all: boolean): (FlatNode | number)[] {
  if (all) return [...chain];
  const out: (FlatNode | number)[] = [];
  let run: FlatNode[] = [];
  const flush = () => {
    const hidden = run.length - FOLD_KEEP_HEAD - FOLD_KEEP_TAIL;
    if (hidden >= FOLD_MIN_HIDDEN) out.push(...run.slice(0, FOLD_KEEP_HEAD), hidden, ...run.slice(run.length - FOLD_KEEP_TAIL));
    else out.push(...run);
    run = [];
  };
  chain.forEach((node, index) => {
    if (index === 0 || index === chain.length - 1 || isLandmark(node)) {
      flush();
      out.push(node);
    } else {
      run.push(node);
    }
  });
  flush();
  return out;
}

function nodeLine(node: FlatNode, prefixWidth: number, options: RenderTreeOptions, style: Styler): string {
  const { kind, text } = entryPreview(node.entry);
  const head = kind === "compaction" || kind === "branch summary" ? `[${kind}]` : `${kind}:`;
  const tags: string[] = [];
  if (node.label !== undefined) tags.push(style("yellow", `[label: ${node.label}]`));
  if (node.isLeaf) tags.push(style("green", style("bold", "← current leaf")));
  const tagText = tags.length > 0 ? `  ${tags.join(" ")}` : "";

  let preview = text;
  if (options.width !== undefined) {
    const fixed = prefixWidth + node.entry.id.length + 1 + head.length + 1 + visibleLength(tagText);
    preview = cut(preview, Math.max(MIN_PREVIEW, options.width - fixed));
  }
  const kindStyle = KIND_STYLE[kind];
  const body = preview.length > 0 ? `${head} ${preview}` : head;
  return `${style("dim", node.entry.id)} ${kindStyle ? style(kindStyle, body) : body}${tagText}`;
}

/** Cuts to at most `max` characters (code points, not halves of surrogate pairs), ending with "…". */
function cut(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("").trimEnd()}…`;
}

// eslint-disable-next-line no-control-regex
const ANSI_PATTERN = /\x1b\[[0-9;]*m/g;

function visibleLength(text: string): number {
  return Array.from(text.replace(ANSI_PATTERN, "")).length;
}

type Styler = (name: Style, text: string) => string;

function styler(color: boolean): Styler {
  return color ? (name, text) => (text.length === 0 ? text : `${ANSI[name]}${text}${ANSI.reset}`) : (_name, text) => text;
}
