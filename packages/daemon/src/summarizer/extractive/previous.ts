/**
 * The previous summaries a new one updates (iterative compaction, summaries inside a branch),
 * read back into their parts by core's `parseSummaryParts`, whoever wrote them: ours, pi's,
 * a model's, Claude Code's.
 */
import { emptySummaryParts, parseSummaryParts, type SummaryParts } from "@base-context/core";

export type ParsedSummary = SummaryParts;
export { emptySummaryParts as emptySummary, parseSummaryParts as parseSummary };

type ListKey = Exclude<keyof SummaryParts, "files" | "foreign">;
const LISTS: readonly ListKey[] = [
  "goal",
  "constraints",
  "done",
  "inProgress",
  "blocked",
  "decisions",
  "nextSteps",
  "critical",
  "userMessages",
  "fixedErrors",
  "other",
];

/** Merges several parsed summaries, keeping order and dropping duplicates. */
export function mergeParsed(summaries: readonly SummaryParts[]): SummaryParts {
  const merged = emptySummaryParts();
  for (const key of LISTS) {
    const seen = new Set<string>();
    for (const summary of summaries) {
      for (const item of summary[key]) {
        const norm = item.toLowerCase();
        if (seen.has(norm)) continue;
        seen.add(norm);
        merged[key].push(item);
      }
    }
  }
  const files = new Map<string, boolean>();
  for (const summary of summaries) for (const file of summary.files) files.set(file.path, (files.get(file.path) ?? false) || file.modified);
  merged.files = [...files].map(([path, modified]) => ({ path, modified }));
  merged.foreign = summaries.some((summary) => summary.foreign);
  return merged;
}
