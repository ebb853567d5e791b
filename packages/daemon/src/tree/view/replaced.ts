/**
 * How many entries each compaction and branch summary stands for, so the tree can say so next
 * to what the summary says. A compaction replaces the entries of its path from where the
 * previous compaction's kept part began (or the root) up to its own first kept entry; a
 * branch summary replaces the branch it was written for: from the entry left (`fromId`) up to
 * where that branch meets the summary's own path.
 */
import type { FlatNode } from "./layout.js";

export function replacedCounts(nodes: readonly FlatNode[]): Map<string, number> {
  const byId = new Map<string, FlatNode>();
  for (const node of nodes) byId.set(node.entry.id, node);
  const counts = new Map<string, number>();
  for (const node of nodes) {
    const { entry } = node;
    if (entry.type === "compaction") {
      const path = pathTo(byId, entry.parentId);
      // A compaction that names itself (Claude Code's, imported by an earlier version) replaces its whole path.
      const kept = entry.firstKeptEntryId === entry.id ? path.length : path.lastIndexOf(entry.firstKeptEntryId);
      if (kept < 0) continue;
      let from = 0;
      for (let i = kept - 1; i >= 0; i--) {
        const earlier = byId.get(path[i]!)!.entry;
        if (earlier.type === "compaction") {
          const previousKept = path.lastIndexOf(earlier.firstKeptEntryId, i);
          from = previousKept >= 0 ? previousKept : i + 1;
          break;
        }
      }
      counts.set(entry.id, kept - from);
    } else if (entry.type === "branch_summary") {
      const own = new Set(pathTo(byId, entry.parentId));
      let count = 0;
      for (let id: string | null = entry.fromId; id !== null && !own.has(id); id = byId.get(id)?.entry.parentId ?? null) {
        if (!byId.has(id)) break;
        count++;
      }
      counts.set(entry.id, count);
    }
  }
  return counts;
}

/** Ids from the root down to `leafId` (empty for null). */
function pathTo(byId: ReadonlyMap<string, FlatNode>, leafId: string | null): string[] {
  const path: string[] = [];
  const seen = new Set<string>();
  for (let id = leafId; id !== null && !seen.has(id); id = byId.get(id)?.entry.parentId ?? null) {
    if (!byId.has(id)) break;
    seen.add(id);
    path.push(id);
  }
  return path.reverse();
}
