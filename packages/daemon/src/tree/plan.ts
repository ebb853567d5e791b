/**
 * Where a navigation lands (docs/design.md#tree-navigation), decided from the two paths alone: the entries being
 * left, the new leaf, and the text handed back to the client's input box.
 */
import type { SessionEntry } from "@base-context/protocol";
import { collectEntriesForBranchSummary } from "@base-context/core";
import type { CountedEntry } from "../sessions/index.js";

export interface NavigationPlan {
  /** Deepest entry shared by the old leaf's path and the target's path. */
  commonAncestorId: string | null;
  /** The entries being left (old leaf back to, not including, the common ancestor), oldest first. */
  entriesToSummarize: CountedEntry[];
  /** The target, or its parent when the target is a user or custom message (null: before the root). */
  newLeafId: string | null;
  /** The target's text when the target is a user or custom message. */
  editorText?: string;
}

/**
 * @param oldPath the FULL path root → old leaf with stored counts (not the context path, which a
 *   compaction shortens: entries before it are still being left)
 * @param targetPath root → target
 */
export function planNavigation(oldPath: readonly CountedEntry[], targetPath: readonly SessionEntry[]): NavigationPlan {
  const target = targetPath[targetPath.length - 1];
  if (!target) throw new Error("planNavigation: the target path is empty");
  const { entries, commonAncestorId } = collectEntriesForBranchSummary(
    oldPath,
    targetPath.map((entry) => entry.id),
  );
  const editorText = editorTextOf(target);
  const plan: NavigationPlan = {
    commonAncestorId,
    entriesToSummarize: entries,
    // Selecting a message the user wrote means "write this again": the leaf goes before it and
    // the text goes back to the input box, so the next message becomes its sibling.
    newLeafId: editorText === undefined ? target.id : target.parentId,
  };
  if (editorText !== undefined) plan.editorText = editorText;
  return plan;
}

/** The text of a user message or custom_message entry (text blocks joined, as pi does); undefined for anything else. */
export function editorTextOf(entry: SessionEntry): string | undefined {
  if (entry.type === "message" && entry.message.role === "user") return contentText(entry.message.content);
  if (entry.type === "custom_message") return contentText(entry.content);
  return undefined;
}

function contentText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : "")).join("");
}
