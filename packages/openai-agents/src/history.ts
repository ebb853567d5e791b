/**
 * The items the model must see, read from a session's path: the latest compaction's summary, the
 * entries it kept and everything after it (what `context/build` holds), each item with the entry
 * it came from so that a pop or a suffix replacement knows where to branch.
 */
import type { AgentInputItem } from "@openai/agents";
import type { CompactionEntry, SessionEntry } from "@base-context/protocol";
import {
  branchSummaryText,
  compactionSummaryText,
  entryToContextMessage,
  pruneStub,
  prunedOutputs,
  selectContextEntries,
  type CountedEntry,
} from "@base-context/core";
import { itemsOfMessage, storedItems, withPrunedOutput } from "./items.js";

export interface ViewItem {
  item: AgentInputItem;
  /** The entry that holds the item; for a summary, the compaction or branch summary entry. */
  entry: SessionEntry;
  /** The item's place among the items of its entry. */
  index: number;
  /** The items of the same entry (one model response is one entry). */
  siblings: AgentInputItem[];
  summary: boolean;
}

export interface HistoryView {
  items: ViewItem[];
  /** The latest compaction on the path, whose summary opens the view. */
  compaction?: CompactionEntry;
  path: SessionEntry[];
}

const summaryItem = (text: string): AgentInputItem => ({ role: "user", content: text }) as AgentInputItem;

export function historyView(path: SessionEntry[]): HistoryView {
  const counted: CountedEntry[] = path.map((entry) => ({ entry, tokens: 0 }));
  const selection = selectContextEntries(counted);
  const hidden = prunedOutputs(counted);
  const items: ViewItem[] = [];
  const compaction = selection.compaction?.entry;
  if (compaction) {
    // A compaction the SDK made with OpenAI's responses.compact keeps its opaque item for the model.
    const providerItem = storedItems(compaction.details)?.[0];
    const item = providerItem ?? summaryItem(compactionSummaryText(compaction.summary));
    items.push({ item, entry: compaction, index: 0, siblings: [item], summary: true });
  }
  for (const { entry } of [...selection.keptBeforeCompaction, ...selection.afterCompaction]) {
    const message = entryToContextMessage(entry);
    if (!message) continue;
    if (message.role === "branchSummary") {
      const item = summaryItem(branchSummaryText(message.summary));
      items.push({ item, entry, index: 0, siblings: [item], summary: true });
      continue;
    }
    let entryItems = storedItems(message) ?? itemsOfMessage(message as unknown as Record<string, unknown>);
    const pruned = hidden.get(entry.id);
    if (pruned) entryItems = entryItems.map((item) => withPrunedOutput(item, pruneStub(pruned)));
    entryItems.forEach((item, index) => items.push({ item, entry, index, siblings: entryItems, summary: false }));
  }
  return { items, ...(compaction ? { compaction } : {}), path };
}
