/**
 * Changing the end of a session's history without deleting anything: the leaf moves back to where
 * the change starts, and what stays of the entry it lands in, the compaction in force (when the
 * change starts inside the items it kept and some of them stay), the prune decisions made after
 * that point (for the outputs that stay) and the new items are appended there, as a new branch.
 * The old items stay in the tree, reachable with `base-context tree`.
 *
 * Every state leads to a valid path: a change that starts at a compaction's first kept entry leaves
 * that compaction behind (it no longer applies: the context is the path as it is before that
 * entry), one that starts at the summary keeps nothing of the history.
 */
import { randomUUID } from "node:crypto";
import type { AgentInputItem } from "@openai/agents";
import { EntryAppendMany, SessionBranch, type EntryInput, type PrunedOutput, type SessionEntry } from "@base-context/protocol";
import { pruneEntryInput, savedBy } from "@base-context/core";
import type { HistoryView } from "./history.js";
import { groupItems, groupToEntry } from "./items.js";
import type { DaemonLink } from "./link.js";

export interface RewriteExtras {
  /** A transaction record appended first, in the same write. */
  marker?: EntryInput;
  /** An SDK compaction item (OpenAI's `responses.compact`) that replaces everything before `from`. */
  providerCompaction?: AgentInputItem;
}

/** `customType` of the entry a provider's compaction keeps from: nothing visible, so it keeps no history. */
export const KEPT_NOTHING_TYPE = "openai-agents.kept-nothing";

/** Where the leaf goes, then what is appended under it, in one write. */
export interface RewritePlan {
  branchTo: string | null;
  entries: EntryInput[];
}

const newId = () => randomUUID().replaceAll("-", "").slice(0, 16);

/** The view's items before `from`, then `replacement`, as a leaf to move to and entries to append. */
export function planRewrite(view: HistoryView, from: number, replacement: AgentInputItem[], extras: RewriteExtras = {}): RewritePlan {
  const entries: EntryInput[] = extras.marker ? [extras.marker] : [];
  const leaf = view.path.at(-1)?.id ?? null;
  const target = view.items[from];
  let branchTo: string | null;
  if (extras.providerCompaction) {
    branchTo = leaf;
    entries.push(...providerCompaction(extras.providerCompaction));
  } else if (!target) {
    branchTo = leaf;
  } else if (target.summary && target.entry.type === "compaction") {
    // The summary stands for the whole history before its kept part: nothing of it stays.
    branchTo = null;
  } else {
    branchTo = target.entry.parentId;
    const siblings = groupItems(target.siblings.slice(0, target.index));
    const kept = siblings.map((group) => ({ ...groupToEntry(group), id: newId() }) as EntryInput & { id: string });
    entries.push(...kept);
    const stays = new Set(view.path.slice(0, view.path.indexOf(target.entry)).map((entry) => entry.id));
    const pruned = prunedSince(view.path, view.path.indexOf(target.entry), stays);
    if (pruned) entries.push(pruned);
    const compaction = keptCompaction(view, target.entry, kept[0]?.id);
    if (compaction) entries.push(compaction);
  }
  entries.push(...groupItems(replacement).map(groupToEntry));
  return { branchTo, entries };
}

/** Moves the leaf and appends the plan in one write; when the append fails the leaf goes back. */
export async function rewriteFrom(
  link: DaemonLink,
  sessionId: string,
  view: HistoryView,
  from: number,
  replacement: AgentInputItem[],
  extras: RewriteExtras = {},
): Promise<void> {
  const { branchTo, entries } = planRewrite(view, from, replacement, extras);
  const previousLeaf = view.path.at(-1)?.id ?? null;
  if (branchTo !== previousLeaf) await link.request(SessionBranch, { sessionId, entryId: branchTo });
  if (entries.length === 0) return;
  try {
    await link.request(EntryAppendMany, { sessionId, entries, requestId: randomUUID() });
  } catch (error) {
    // Nothing was appended: the leaf goes back where it was, so the history reads as before.
    if (branchTo !== previousLeaf) await link.request(SessionBranch, { sessionId, entryId: previousLeaf }).catch(() => undefined);
    throw error;
  }
}

/**
 * The compaction in force written again after what stays of its kept items, when the change starts
 * inside them and some stay: from its own first kept entry, or from the first re-appended item when
 * the change starts at that entry. Past its first kept entry it no longer applies: undefined.
 */
function keptCompaction(view: HistoryView, target: SessionEntry, firstReappended: string | undefined): EntryInput | undefined {
  const { compaction } = view;
  if (!compaction || view.path.indexOf(target) > view.path.indexOf(compaction)) return undefined;
  const firstKept = target.id !== compaction.firstKeptEntryId ? compaction.firstKeptEntryId : firstReappended;
  if (firstKept === undefined) return undefined;
  const { id: _id, parentId: _parentId, timestamp: _timestamp, ...body } = compaction;
  return { ...body, id: newId(), firstKeptEntryId: firstKept } as EntryInput;
}

/**
 * What the prune entries from `index` on hide (or cut) among the entries that stay, as one prune
 * entry: leaving them behind with the moved leaf would show those outputs in full again.
 */
function prunedSince(path: readonly SessionEntry[], index: number, stays: ReadonlySet<string>): EntryInput | undefined {
  const hiddenBefore = new Set(
    path.slice(0, index).flatMap((entry) => (entry.type === "prune" ? entry.hidden.map((item) => item.entryId) : [])),
  );
  const hidden = new Map<string, PrunedOutput>();
  for (const entry of path.slice(index)) {
    if (entry.type !== "prune") continue;
    for (const item of entry.hidden) {
      if (stays.has(item.entryId) && !hiddenBefore.has(item.entryId) && !hidden.has(item.entryId)) hidden.set(item.entryId, item);
    }
  }
  if (hidden.size === 0) return undefined;
  const items = [...hidden.values()];
  return pruneEntryInput({ hidden: items, tokensSaved: savedBy(items) }) as EntryInput;
}

/**
 * The SDK's compaction item in a compaction entry that keeps nothing of the history: its first
 * kept entry is an entry of no content written just before it.
 */
function providerCompaction(item: AgentInputItem): EntryInput[] {
  const anchor = newId();
  return [
    { type: "custom", id: anchor, customType: KEPT_NOTHING_TYPE } as EntryInput,
    {
      type: "compaction",
      id: newId(),
      summary: "(compacted by the model provider: the compaction item below replaces the history before it)",
      firstKeptEntryId: anchor,
      tokensBefore: null,
      details: { agentsItems: [item] },
    } as EntryInput,
  ];
}
