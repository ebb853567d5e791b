/**
 * Entries refused on import (too large, too deep, invalid) that named an id and a parent. Their
 * children are not detached: they hang under the nearest kept ancestor (following chains of
 * refused entries), and the refused line's reason says where its children went.
 */
import type { SkippedLine } from "./import-gaps.js";

export class SkippedParents {
  private readonly parents = new Map<string, { parentId: string | null; skip: SkippedLine; told: boolean; toldTail?: true }>();

  add(id: string, parentId: string | null, skip: SkippedLine): void {
    if (!this.parents.has(id)) this.parents.set(id, { parentId, skip, told: false });
  }

  /** A later kept entry with this id is the one its children mean. */
  kept(id: string): void {
    if (this.parents.size > 0) this.parents.delete(id);
  }

  /** `parentId` itself when it was not refused; else its nearest kept ancestor (null: none, a root). */
  keptAncestor(parentId: string): string | null {
    const first = this.parents.get(parentId);
    if (first === undefined) return parentId;
    const current = this.nearestKept(parentId);
    if (!first.told) {
      first.told = true;
      first.skip.reason +=
        current === null ? "; its children became roots (no kept ancestor)" : `; its children were attached to "${current}"`;
    }
    return current;
  }

  /**
   * For a compaction's first kept entry: the nearest kept ancestor when the entry was refused and
   * has one; undefined when it was not refused (or has no kept ancestor: nothing better to name).
   */
  keptAncestorForTail(firstKeptEntryId: string): string | undefined {
    const skipped = this.parents.get(firstKeptEntryId);
    if (skipped === undefined) return undefined;
    const kept = this.nearestKept(firstKeptEntryId);
    if (kept === null) return undefined;
    if (!skipped.toldTail) skipped.skip.reason += `; a compaction's kept entries now start at "${kept}"`;
    skipped.toldTail = true;
    return kept;
  }

  private nearestKept(skippedId: string): string | null {
    let current: string | null = skippedId;
    const seen = new Set<string>();
    while (current !== null && !seen.has(current)) {
      const skipped = this.parents.get(current);
      if (skipped === undefined) break;
      seen.add(current);
      current = skipped.parentId;
    }
    // A cycle among refused entries has no kept ancestor.
    return current !== null && seen.has(current) ? null : current;
  }
}
