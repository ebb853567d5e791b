/**
 * Which entries a branch summary covers (docs/design.md#tree-navigation): the ones the user is leaving, from the
 * old leaf back to (not including) the deepest entry the old and the target paths share.
 */
import type { CountedEntry } from "../types.js";

/** The deepest id on both paths (each root → leaf), or null when they share nothing. */
export function findCommonAncestor(oldPathIds: readonly string[], targetPathIds: readonly string[]): string | null {
  const onOldPath = new Set(oldPathIds);
  for (let i = targetPathIds.length - 1; i >= 0; i--) {
    const id = targetPathIds[i]!;
    if (onOldPath.has(id)) return id;
  }
  return null;
}

export interface BranchEntries<T extends CountedEntry> {
  /** Entries being left, oldest first; compactions included (their summaries are context too). */
  entries: T[];
  commonAncestorId: string | null;
}

/**
 * @param oldPath the full path root → old leaf (empty when there is no old leaf)
 * @param targetPathIds ids of the path root → navigation target
 */
export function collectEntriesForBranchSummary<T extends CountedEntry>(
  oldPath: readonly T[],
  targetPathIds: readonly string[],
): BranchEntries<T> {
  const commonAncestorId = findCommonAncestor(
    oldPath.map((item) => item.entry.id),
    targetPathIds,
  );
  const ancestorIndex = commonAncestorId === null ? -1 : oldPath.findIndex((item) => item.entry.id === commonAncestorId);
  return { entries: oldPath.slice(ancestorIndex + 1), commonAncestorId };
}
