/**
 * Reads a summary in the structured format back into its items, so a new summary can keep them
 * (iterative compaction, summaries inside a branch). Tolerant: a model or a plugin may have
 * written it; whatever is not in a known section lands in `other`.
 */

export interface ParsedSummary {
  goal: string[];
  constraints: string[];
  done: string[];
  inProgress: string[];
  blocked: string[];
  decisions: string[];
  nextSteps: string[];
  critical: string[];
  /** Items of unknown sections, or text outside any section. */
  other: string[];
}

type SectionKey = keyof ParsedSummary;

const FILE_LIST_RE = /<(read-files|modified-files)>[\s\S]*?<\/\1>/g;
const PLACEHOLDER_RE = /^\(?(?:none|n\/a|nothing|none yet|none recorded)\b.*\)?$/i;
// The preambles the pipeline puts before a summary: they carry no information.
const PREAMBLE_RE =
  /^(?:The user explored a different conversation branch|Summary of that exploration|The conversation history before this point was compacted|\*\*Turn Context \(split turn\):\*\*|---)/;

export function emptySummary(): ParsedSummary {
  return { goal: [], constraints: [], done: [], inProgress: [], blocked: [], decisions: [], nextSteps: [], critical: [], other: [] };
}

export function parseSummary(text: string): ParsedSummary {
  const parsed = emptySummary();
  let section: SectionKey = "other";
  for (const rawLine of text.replace(FILE_LIST_RE, "").split("\n")) {
    const line = rawLine.trim();
    if (line.length === 0) continue;
    const heading = /^(#{2,4})\s+(.*)$/.exec(line);
    if (heading) {
      section = sectionFor(heading[2] ?? "", heading[1]?.length ?? 2, section);
      continue;
    }
    if (PREAMBLE_RE.test(line)) continue;
    const item = line.replace(/^(?:[-*+•]\s+|\d+[.)]\s+)?(?:\[[ xX]\]\s+)?/, "").trim();
    if (item.length === 0 || PLACEHOLDER_RE.test(item)) continue;
    parsed[section].push(item);
  }
  return parsed;
}

/** Merges several parsed summaries, keeping order and dropping duplicates. */
export function mergeParsed(summaries: readonly ParsedSummary[]): ParsedSummary {
  const merged = emptySummary();
  for (const key of Object.keys(merged) as SectionKey[]) {
    const seen = new Set<string>();
    for (const summary of summaries) {
      for (const item of summary[key]) {
        const norm = item.toLowerCase();
        if (!seen.has(norm)) {
          seen.add(norm);
          merged[key].push(item);
        }
      }
    }
  }
  return merged;
}

function sectionFor(title: string, level: number, current: SectionKey): SectionKey {
  const name = title.toLowerCase().replace(/[^a-z& ]/g, "").trim();
  if (level >= 3) {
    if (name.startsWith("done") || name.startsWith("completed")) return "done";
    if (name.startsWith("in progress") || name.startsWith("current")) return "inProgress";
    if (name.startsWith("blocked") || name.startsWith("blockers")) return "blocked";
    if (current === "done" || current === "inProgress" || current === "blocked") return current;
  }
  if (name.startsWith("goal") || name.startsWith("original request")) return "goal";
  if (name.startsWith("constraints") || name.startsWith("preferences")) return "constraints";
  if (name.startsWith("progress") || name.startsWith("early progress")) return "done";
  if (name.startsWith("key decisions") || name.startsWith("decisions")) return "decisions";
  if (name.startsWith("next steps") || name.startsWith("next")) return "nextSteps";
  if (name.startsWith("critical context") || name.startsWith("context for suffix") || name.startsWith("context")) return "critical";
  return "other";
}
