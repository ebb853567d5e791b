/**
 * Pinned guard: while an entry carries the label "pinned", no summary may swallow it.
 * - `session_before_compact` cancels the compaction when a pinned entry is among the entries
 *   that would be summarized (pinned entries in the kept tail are fine);
 * - `session_before_tree` cancels a navigation that would summarize a branch holding a pinned entry.
 *
 * Labels are `label` entries ({ targetId, label }); the latest one for a target wins and one
 * without `label` clears it. PINNED_GUARD_LABEL changes the label looked for.
 */
import { definePlugin, type SessionEntry } from "@base-context/plugin-sdk";

function pinLabel(): string {
  return (process.env.PINNED_GUARD_LABEL ?? "pinned").trim().toLowerCase();
}

/** Entry ids whose current label is the pin label, reading label entries in order. */
export function pinnedIds(entries: readonly SessionEntry[]): Set<string> {
  const labels = new Map<string, string | undefined>();
  for (const entry of entries) {
    if (entry.type === "label") labels.set(entry.targetId, entry.label?.trim().toLowerCase());
  }
  const wanted = pinLabel();
  return new Set([...labels].filter(([, label]) => label === wanted).map(([id]) => id));
}

export default definePlugin({
  name: "pinned-guard",
  apiVersion: 1,
  hooks: {
    session_before_compact(event, ctx) {
      const pinned = pinnedIds(event.branchEntries);
      const { summarizeEntryIds, turnPrefixEntryIds } = event.preparation;
      const swallowed = [...summarizeEntryIds, ...turnPrefixEntryIds].filter((id) => pinned.has(id));
      if (swallowed.length === 0) return undefined;
      ctx.log("info", `compaction cancelled: pinned ${swallowed.join(", ")} would be summarized`);
      return { cancel: true };
    },

    session_before_tree(event, ctx) {
      const { preparation } = event;
      if (!preparation.userWantsSummary) return undefined;
      const pinned = pinnedIds(preparation.entriesToSummarize);
      const swallowed = preparation.entriesToSummarize.filter((entry) => pinned.has(entry.id)).map((entry) => entry.id);
      if (swallowed.length === 0) return undefined;
      ctx.log("info", `navigation cancelled: the branch being left holds pinned ${swallowed.join(", ")}`);
      return { cancel: true };
    },
  },
});
