/**
 * What "Compact Now" tells the user: one line for the notification (what happened, tokens before
 * and after, who wrote the summary, the retention line) and a Markdown report with the summary
 * itself and what it lost, opened from the notification.
 */
import type { CompactionResult } from "@base-context/protocol";
import { formatRetention } from "@base-context/core";
import { escapeMarkdown, fenced, formatCount, plural } from "./format.js";
import { lostCount, lostLines } from "./tree-model.js";

export interface CompactionOutcome {
  level: "info" | "warning" | "error";
  /** The notification's text. */
  message: string;
  /** A Markdown report (committed runs), offered as "Show Summary". */
  report?: string;
}

/** Who wrote a summary, for people: the summarizer names the daemon reports (`extractive`, `openai:gpt-4.1-mini`, `plugin:x`, …). */
export function summarizerName(summarizer: string | undefined): string {
  if (summarizer === undefined) return "unknown";
  if (summarizer === "extractive") return "the built-in extractive summarizer (offline)";
  return summarizer;
}

export function compactionOutcome(result: CompactionResult, title: string): CompactionOutcome {
  const stats = result.stats;
  const before = stats?.tokensBefore ?? null;
  const after = stats?.tokensAfter;
  const tokens = before !== null && after !== undefined ? `${formatCount(before)} → ${formatCount(after)} tokens` : undefined;
  switch (result.status) {
    case "committed": {
      const what = result.rung === "prune" ? "Pruned" : "Compacted";
      const parts = [
        `${what} "${title}"`,
        tokens,
        result.rung === "prune"
          ? `${plural(result.pruned?.outputs ?? 0, "tool output")} hidden`
          : `summary by ${summarizerName(result.summarizer)}`,
        result.retention ? formatRetention(result.retention) : undefined,
      ].filter((part): part is string => part !== undefined);
      const lost = result.retention ? lostCount(result.retention) : 0;
      return { level: lost > 0 ? "warning" : "info", message: `${parts.join(" · ")}.`, report: compactionReport(result, title) };
    }
    case "nothing_to_compact":
      return { level: "info", message: `Nothing to compact in "${title}"${result.message ? `: ${result.message}` : ""}.` };
    case "disabled":
      return { level: "warning", message: `Compaction is off for "${title}"${result.message ? `: ${result.message}` : ""}.` };
    case "stale":
      return {
        level: "warning",
        message: `"${title}" changed while its summary was written (another client appended or moved it); nothing was committed. Compact again.`,
      };
    case "cancelled":
      return { level: "info", message: `The compaction of "${title}" was cancelled${result.message ? `: ${result.message}` : ""}; nothing was written.` };
  }
}

function compactionReport(result: CompactionResult, title: string): string {
  const out = [`# Compaction of ${escapeMarkdown(title)}`, ""];
  const stats = result.stats;
  const lines: string[] = [];
  if (result.rung) lines.push(`- rung: ${result.rung}`);
  if (result.summarizer) lines.push(`- summary by: ${summarizerName(result.summarizer)}`);
  if (stats) {
    if (stats.tokensBefore !== null) lines.push(`- tokens before: ${formatCount(stats.tokensBefore)} (estimate)`);
    if (stats.tokensAfter !== undefined) lines.push(`- tokens after: ${formatCount(stats.tokensAfter)} (estimate)`);
    lines.push(`- summarized: ${plural(stats.summarizedMessages, "message")}; kept verbatim: ${plural(stats.keptEntries, "entry", "entries")}`);
    if (stats.isSplitTurn) lines.push(`- a turn was split: ${plural(stats.turnPrefixMessages, "message")} of its start summarized apart`);
    lines.push(`- took ${formatCount(stats.durationMs)} ms`);
  }
  if (result.pruned) lines.push(`- pruned: ${plural(result.pruned.outputs, "tool output")}, ${formatCount(result.pruned.tokensSaved)} tokens saved`);
  if (result.entry) lines.push(`- entry: \`${result.entry.id}\``);
  for (const failure of result.pluginFailures ?? []) lines.push(`- plugin ${failure.pluginId} failed (${failure.kind}): ${escapeMarkdown(failure.message)}`);
  out.push(...lines, "");
  if (result.retention) {
    out.push(`**Retention:** ${formatRetention(result.retention)}`, "");
    if (lostCount(result.retention) > 0) out.push("Lost:", "", ...lostLines(result.retention), "");
  }
  if (result.entry?.type === "compaction") out.push("## Summary", "", fenced(result.entry.summary, "markdown"), "");
  return out.join("\n");
}
