/**
 * Narrowing a session tree down to what a person is looking for: user messages only, labelled
 * entries, compactions, branch summaries and prunes, or the neighbourhood of one entry. Entries that do
 * not match are dropped and each kept entry hangs under its nearest kept ancestor, so the view
 * keeps the tree's shape. The current leaf always stays, to show where the session is.
 */
import { childrenByParent, isSummaryEntry, type FlatNode } from "./layout.js";

export const TREE_FILTERS = ["user", "labelled", "summaries"] as const;
export type TreeFilter = (typeof TREE_FILTERS)[number];

export interface TreeFilterOptions {
  filter?: TreeFilter | undefined;
  /** Only entries at most `context` steps from this one along the tree (up to ancestors, down to descendants). */
  around?: { id: string; context: number } | undefined;
}

const MATCHES: Record<TreeFilter, (node: FlatNode) => boolean> = {
  user: (node) => node.entry.type === "message" && node.entry.message.role === "user",
  labelled: (node) => node.label !== undefined,
  summaries: (node) => isSummaryEntry(node.entry),
};

export function filterTree(nodes: readonly FlatNode[], options: TreeFilterOptions): FlatNode[] {
  const keep = new Set<string>();
  const near = options.around ? neighbourhood(nodes, options.around.id, options.around.context) : undefined;
  const matches = options.filter ? MATCHES[options.filter] : undefined;
  for (const node of nodes) {
    const id = node.entry.id;
    if (near && !near.has(id)) continue;
    if (matches && !matches(node) && !node.isLeaf && id !== options.around?.id) continue;
    keep.add(id);
  }
  if (keep.size === nodes.length) return [...nodes];

  const byId = new Map(nodes.map((node) => [node.entry.id, node] as const));
  // Nearest kept ancestor of each node, found in one pass: parents come before children.
  const keptAbove = new Map<string, string | null>();
  const out: FlatNode[] = [];
  for (const node of nodes) {
    const parentId = node.entry.parentId;
    const above = parentId === null || !byId.has(parentId) ? null : keep.has(parentId) ? parentId : (keptAbove.get(parentId) ?? null);
    keptAbove.set(node.entry.id, above);
    if (!keep.has(node.entry.id)) continue;
    out.push(above === parentId ? node : { ...node, entry: { ...node.entry, parentId: above } });
  }
  return out;
}

/** Ids within `steps` of `id`: its ancestors up to `steps` above, and its descendants up to `steps` below. */
function neighbourhood(nodes: readonly FlatNode[], id: string, steps: number): Set<string> {
  const byId = new Map(nodes.map((node) => [node.entry.id, node] as const));
  const near = new Set<string>([id]);
  let up: string | null = byId.get(id)?.entry.parentId ?? null;
  for (let step = 0; step < steps && up !== null && byId.has(up); step++) {
    near.add(up);
    up = byId.get(up)!.entry.parentId;
  }
  const children = childrenByParent(nodes);
  let level = [id];
  for (let step = 0; step < steps && level.length > 0; step++) {
    level = level.flatMap((parent) => (children.get(parent) ?? []).map((child) => child.entry.id));
    for (const child of level) near.add(child);
  }
  return near;
}
