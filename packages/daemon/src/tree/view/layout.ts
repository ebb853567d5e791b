/**
 * The rows of a drawn session tree, before any text: which node (or folded stretch) goes on
 * which row, under which box-line prefix. Shared by the static view (render.ts) and the
 * interactive picker, so both draw the same tree.
 *
 * Walks chains (maximal runs where each node has one child) with an explicit stack, never
 * recursing: a linear stretch stays in one column however long it is, and only real branch
 * points indent.
 */
import type { FlatTreeNode } from "@base-context/protocol";
import type { z } from "zod";

export type FlatNode = z.infer<typeof FlatTreeNode>;

/** A stretch of plain entries keeps this many at each end visible when folded. */
export const FOLD_KEEP_HEAD = 2;
export const FOLD_KEEP_TAIL = 2;
/** Fewer hidden entries than this are shown instead: a fold line must save lines. */
export const FOLD_MIN_HIDDEN = 3;

export type TreeRow =
  | {
      kind: "node";
      node: FlatNode;
      prefix: string /** entries hidden under it by `collapsed` */;
      hiddenBelow: number;
      hasChildren: boolean;
    }
  | { kind: "fold"; count: number; prefix: string }
  | { kind: "deeper"; count: number; branches: number; prefix: string };

export interface LayoutOptions {
  /** Show every entry of linear stretches: no `… N more entries …`. */
  all?: boolean;
  /** Nodes whose descendants are hidden (the picker's folds). */
  collapsed?: ReadonlySet<string>;
  /** Branches nested deeper than this many branch points are replaced by one `deeper` row. */
  maxBranchDepth?: number;
}

interface Chain {
  start: FlatNode;
  /** Prefix of the chain's first line (with its branch connector). */
  lead: string;
  /** Prefix of every other line of the chain and of its branches. */
  indent: string;
  /** Branch points above this chain. */
  level: number;
}

export function childrenByParent(nodes: readonly FlatNode[]): Map<string, FlatNode[]> {
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

/** An entry whose parent is missing is shown as a root, as pi shows orphans. */
export function rootsOf(nodes: readonly FlatNode[]): FlatNode[] {
  const ids = new Set(nodes.map((node) => node.entry.id));
  return nodes.filter((node) => node.entry.parentId === null || !ids.has(node.entry.parentId));
}

export function layoutTree(nodes: readonly FlatNode[], options: LayoutOptions = {}): TreeRow[] {
  const children = childrenByParent(nodes);
  const roots = rootsOf(nodes);
  const collapsed = options.collapsed ?? new Set<string>();
  const sizes = collapsed.size > 0 || options.maxBranchDepth !== undefined ? subtreeSizes(nodes, children) : undefined;
  const rows: TreeRow[] = [];

  const stack: Chain[] = branchesOf(roots, "", roots.length > 1, 0).reverse();
  while (stack.length > 0) {
    const { start, lead, indent, level } = stack.pop()!;
    const chain = [start];
    for (
      let kids = children.get(start.entry.id);
      kids?.length === 1 && !collapsed.has(chain[chain.length - 1]!.entry.id);
      kids = children.get(chain[chain.length - 1]!.entry.id)
    ) {
      chain.push(kids[0]!);
    }
    for (const [index, item] of foldChain(chain, options.all === true).entries()) {
      const prefix = index === 0 ? lead : indent;
      if (typeof item === "number") rows.push({ kind: "fold", count: item, prefix });
      else {
        const kids = children.get(item.entry.id) ?? [];
        const hiddenBelow = collapsed.has(item.entry.id) ? sizes!.get(item.entry.id)! - 1 : 0;
        rows.push({ kind: "node", node: item, prefix, hiddenBelow, hasChildren: kids.length > 0 });
      }
    }
    const end = chain[chain.length - 1]!;
    if (collapsed.has(end.entry.id)) continue;
    const branches = children.get(end.entry.id) ?? [];
    if (branches.length === 0) continue;
    if (options.maxBranchDepth !== undefined && level + 1 > options.maxBranchDepth) {
      const count = branches.reduce((sum, branch) => sum + sizes!.get(branch.entry.id)!, 0);
      rows.push({ kind: "deeper", count, branches: branches.length, prefix: indent });
      continue;
    }
    stack.push(...branchesOf(branches, indent, true, level + 1).reverse());
  }
  return rows;
}

/** Chains for the children of a branch point (in time order), each with its connector. */
function branchesOf(starts: readonly FlatNode[], indent: string, connect: boolean, level: number): Chain[] {
  if (!connect) return starts.map((start) => ({ start, lead: indent, indent, level }));
  return starts.map((start, index) => {
    const last = index === starts.length - 1;
    return { start, lead: indent + (last ? "└─ " : "├─ "), indent: indent + (last ? "   " : "│  "), level };
  });
}

/**
 * Entries that stand for context taken away (a compaction, a branch summary, a prune hiding tool
 * output): the "summaries" filter keeps them and folding never hides them.
 */
export function isSummaryEntry(entry: FlatNode["entry"]): boolean {
  return entry.type === "compaction" || entry.type === "branch_summary" || entry.type === "prune";
}

/** Entries a reader looks for: never folded away. */
function isLandmark(node: FlatNode): boolean {
  return node.isLeaf === true || node.label !== undefined || isSummaryEntry(node.entry);
}

/**
 * The chain's rows: nodes, and numbers standing for folded stretches. The first and last node
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

/** Entries in each node's subtree (itself included); children come after parents in `nodes`. */
export function subtreeSizes(nodes: readonly FlatNode[], children = childrenByParent(nodes)): Map<string, number> {
  const sizes = new Map<string, number>();
  for (let i = nodes.length - 1; i >= 0; i--) {
    const id = nodes[i]!.entry.id;
    let size = 1;
    for (const kid of children.get(id) ?? []) size += sizes.get(kid.entry.id) ?? 0;
    sizes.set(id, size);
  }
  return sizes;
}
