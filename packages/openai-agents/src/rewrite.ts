/**
 * Changing the end of a session's history without deleting anything: the leaf moves back to where
 * the change starts, and what stays of the entry it lands in, a copy of the compaction that was in
 * force (when the change starts inside the items it kept) and the new items are appended there, as a
 * new branch. The old items stay in the tree, reachable with `base-context tree`.
 *
 * Transactions (`applyHistoryTransaction`) record their `operationId` in a `custom` entry appended
 * in the same `entry/appendMany` as their items: the record and the change are one write.
 */
import { createHash, randomUUID } from "node:crypto";
import { UserError, type AgentInputItem, type SessionHistoryTransactionArgs } from "@openai/agents";
import { EntryAppendMany, SessionBranch, SessionPath, SessionTree, type EntryInput } from "@base-context/protocol";
import { historyView, type HistoryView } from "./history.js";
import { groupItems, groupToEntry } from "./items.js";
import type { DaemonLink } from "./link.js";

export const TRANSACTION_TYPE = "openai-agents.transaction";

export interface RewriteExtras {
  /** A transaction record appended first, in the same write. */
  marker?: EntryInput;
  /** An SDK compaction item (OpenAI's `responses.compact`) that replaces everything before `from`. */
  providerCompaction?: AgentInputItem;
}

const newId = () => randomUUID().replaceAll("-", "").slice(0, 16);

/** Keeps the view's items before `from`, drops the rest and appends `replacement` after them. */
export async function rewriteFrom(
  link: DaemonLink,
  sessionId: string,
  view: HistoryView,
  from: number,
  replacement: AgentInputItem[],
  extras: RewriteExtras = {},
): Promise<void> {
  const entries: EntryInput[] = extras.marker ? [extras.marker] : [];
  let branchTo: string | null;
  const target = view.items[from];
  if (extras.providerCompaction) {
    branchTo = view.path.at(-1)?.id ?? null;
    const id = newId();
    entries.push({
      type: "compaction",
      id,
      summary: "(compacted by the model provider: the compaction item below replaces the history before it)",
      firstKeptEntryId: id,
      tokensBefore: null,
      details: { agentsItems: [extras.providerCompaction] },
    } as EntryInput);
  } else if (!target) {
    branchTo = view.path.at(-1)?.id ?? null;
  } else if (target.summary && target.entry.type === "compaction") {
    // The summary itself goes: nothing of this branch's history is left in the context.
    branchTo = null;
  } else {
    branchTo = target.entry.parentId;
    const kept = target.siblings.slice(0, target.index);
    const keptEntries = groupItems(kept).map((group) => ({ ...groupToEntry(group), id: newId() }) as EntryInput & { id: string });
    entries.push(...keptEntries);
    const compaction = view.compaction;
    const insideKept = compaction !== undefined && view.path.indexOf(target.entry) < view.path.indexOf(compaction);
    if (compaction && insideKept) {
      // The change starts inside the kept items: the compaction is written again after what stays of them.
      const id = newId();
      const firstKept =
        target.entry.id !== compaction.firstKeptEntryId ? compaction.firstKeptEntryId : (keptEntries[0]?.id ?? id);
      const { id: _id, parentId: _parentId, timestamp: _timestamp, ...body } = compaction;
      entries.push({ ...body, id, firstKeptEntryId: firstKept } as EntryInput);
    }
  }
  entries.push(...groupItems(replacement).map(groupToEntry));
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

/** Key-order-independent equality of JSON-like values (what the SDK's snapshots compare). */
export function structurallyEqual(left: unknown, right: unknown): boolean {
  return canonical(left) === canonical(right);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.entries(inner as Record<string, unknown>)
            .filter(([, v]) => v !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : inner,
  );
}

/** The SDK's `applyHistoryTransaction`: atomic, idempotent by `operationId`, a replaced suffix checked first. */
export async function applyTransaction(link: DaemonLink, sessionId: string, args: SessionHistoryTransactionArgs): Promise<void> {
  const operationId = (args as { operationId?: unknown } | undefined)?.operationId;
  const transaction = (args as { transaction?: { type?: unknown } } | undefined)?.transaction;
  if (typeof operationId !== "string" || !operationId.trim()) throw new UserError("Session history transaction operationId must be a non-empty string.");
  if (!transaction || (transaction.type !== "append_items" && transaction.type !== "replace_suffix")) {
    throw new UserError("Unsupported session history transaction type.");
  }
  let digest: string;
  try {
    digest = createHash("sha256").update(canonical(structuredClone(transaction))).digest("hex");
  } catch {
    throw new UserError("Session history transaction items contain invalid or unsupported data.");
  }
  const { nodes = [] } = await link.request(SessionTree, { sessionId, flat: true });
  for (const { entry } of nodes) {
    if (entry.type !== "custom" || entry.customType !== TRANSACTION_TYPE) continue;
    const data = entry.data as { operationId?: string; digest?: string } | undefined;
    if (data?.operationId !== operationId) continue;
    if (data.digest === digest) return;
    throw new UserError("Session history operation was already applied with a different transaction.");
  }
  const marker = { type: "custom", customType: TRANSACTION_TYPE, data: { operationId, digest } } as EntryInput;
  const { entries } = await link.request(SessionPath, { sessionId });
  const view = historyView(entries);
  if (args.transaction.type === "append_items") {
    await rewriteFrom(link, sessionId, view, view.items.length, args.transaction.items, { marker });
    return;
  }
  const { expectedSuffix, replacement } = args.transaction;
  const start = view.items.length - expectedSuffix.length;
  const actual = view.items.slice(Math.max(0, start)).map((item) => item.item);
  if (start < 0 || !structurallyEqual(actual, expectedSuffix)) {
    throw new UserError("Session history suffix no longer matches the transaction precondition.");
  }
  await rewriteFrom(link, sessionId, view, start, replacement, { marker });
}
