/**
 * `session/tree`: the whole session as nested nodes, or flat. Children are in insertion order
 * (the order they were appended, i.e. time order, robust to clock skew in timestamps). Built
 * iteratively: a 100k-entry chain is 100k levels deep.
 */
import type { FlatTreeNode, TreeNode } from "@base-context/protocol";
import type { z } from "zod";
import { AppError } from "../errors.js";
import type { StoredEntry } from "../store/index.js";

export type FlatNode = z.infer<typeof FlatTreeNode>;

/**
 * Deepest nested tree the daemon sends. JSON.stringify recurses per nesting level (two per tree
 * level: node and children array) and overflows V8's stack around 1,500 tree levels.
 */
export const MAX_NESTED_TREE_DEPTH = 1000;

/**
 * Every entry as a node, in insertion order, so a parent always comes before its children.
 * An entry whose parent is missing is a root (as pi shows orphans).
 */
export function flatTree(pages: Iterable<StoredEntry[]>, labels: ReadonlyMap<string, string>, leafId: string | null): FlatNode[] {
  const nodes: FlatNode[] = [];
  for (const page of pages) {
    for (const { entry } of page) {
      const node: FlatNode = { entry };
      const label = labels.get(entry.id);
      if (label !== undefined) node.label = label;
      if (entry.id === leafId) node.isLeaf = true;
      nodes.push(node);
    }
  }
  return nodes;
}

/** Nests flat nodes. AppError not_supported when the result would be too deep to send. */
export function nestTree(flat: readonly FlatNode[]): TreeNode[] {
  const nodes = new Map<string, { node: TreeNode; depth: number }>();
  const roots: TreeNode[] = [];
  for (const { entry, label, isLeaf } of flat) {
    const node: TreeNode = { entry, children: [] };
    if (label !== undefined) node.label = label;
    if (isLeaf) node.isLeaf = true;
    const parent = entry.parentId === null ? undefined : nodes.get(entry.parentId);
    const depth = parent ? parent.depth + 1 : 0;
    if (depth >= MAX_NESTED_TREE_DEPTH) {
      throw new AppError(
        "not_supported",
        `the session tree is more than ${MAX_NESTED_TREE_DEPTH} entries deep, too deep to send nested; request it with "flat": true`,
        { maxDepth: MAX_NESTED_TREE_DEPTH },
      );
    }
    nodes.set(entry.id, { node, depth });
    if (parent) parent.node.children.push(node);
    else roots.push(node);
  }
  return roots;
}
