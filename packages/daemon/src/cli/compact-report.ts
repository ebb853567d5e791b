/**
 * What `base-context compact` prints: the summary (headings highlighted, file lists as lists),
 * then what happened in numbers, then what to try next. `--json` prints the report object as is.
 */
import type { CompactionResult, CompactionStats, RetentionReport, SessionEntry, Settings } from "@base-context/protocol";
import { NO_PRIOR_HISTORY } from "@base-context/core";
import type { ImportedFile } from "./compact-import.js";
import { lostLine, retentionLine, retentionOf } from "./retention-line.js";
import { displayPath, formatCount, lineWidth, plural, styleFor, table, type CliIo, type Style } from "./output.js";
import { ESTIMATE_METHOD } from "./token-words.js";

export interface CompactReport {
  sessionId: string;
  sessionName?: string;
  imported?: ImportedFile;
  status: CompactionResult["status"];
  message?: string;
  summarizer?: string;
  entry?: SessionEntry;
  stats?: CompactionStats;
  /** The rung that ran (prune: no model call). */
  rung?: CompactionResult["rung"];
  /** The prune entry written, alone or with the summary. */
  pruned?: CompactionResult["pruned"];
  /** What the summary kept of what it replaced (the result's, else the entry's `details.retention`). */
  retention?: RetentionReport;
  /** Stored token counts of the context (what context/build reports), before and after. */
  contextTokens: { before: number; after: number };
  /** How contextTokens were counted (token-words.ts). */
  countMethod?: string;
  /** compaction.keepRecentTokens this run used (for the hint when there was nothing to compact). */
  keepRecentTokens?: number;
  /** Plugins that failed during the run (the summary came from elsewhere). */
  pluginFailures?: CompactionResult["pluginFailures"];
  contextMessages: { before: number; after: number };
  durationMs: number;
  jobId?: string;
  /** The summarizer configuration, for the hints. */
  /** `modelNamed`: the global settings name summarizer.model (a key alone selects no model). */
  summarizerConfig: {
    provider: Settings["summarizer"]["provider"];
    apiKeyEnv: string;
    keySet: boolean;
    modelNamed: boolean;
    /** The global settings file this run reads (follows BASE_CONTEXT_HOME), as shown to the user. */
    settingsPath: string;
  };
  /**
   * How the user can run the CLI again: "base-context" when installed, the script path when the
   * report comes from a package script (`pnpm demo`), where `base-context` is not on the PATH.
   */
  cli?: string;
}

export function printCompactReport(io: CliIo, report: CompactReport): void {
  const style = styleFor(io.stdout, io.env);
  const out = (text = "") => io.stdout.write(`${text}\n`);
  const width = Math.min(lineWidth(io), 80);

  if (report.imported) {
    const { imported } = report;
    out(
      style.dim(
        imported.importedBefore === true
          ? `${displayPath(imported.path)} was imported before as session ${report.sessionId} (${plural(imported.entryCount, "entry", "entries")}): ` +
              "compacting that session (import --new-id makes a fresh copy)"
          : `Imported ${displayPath(imported.path)}: ${plural(imported.entryCount, "entry", "entries")}`,
      ),
    );
  }
  if (report.status === "committed" && report.entry?.type === "compaction") {
    out(rule(style, " Summary ", width));
    out(renderSummary(report.entry.summary, style));
    out(rule(style, "", width));
  } else if (report.status === "committed" && report.entry?.type === "prune") {
    out(rule(style, " Pruned tool outputs ", width));
    out(
      table(
        report.entry.hidden.map((item) => [`${style.cyan(item.toolName)} ${item.args}`, style.dim(`${formatCount(item.tokens)} tokens`)]),
      ),
    );
    out(rule(style, "", width));
    out(
      `${style.green("Pruned")} ${plural(report.entry.hidden.length, "old tool output")}: ${formatCount(report.entry.tokensSaved)} tokens hidden, no model call. The stored entries are unchanged.`,
    );
  } else {
    out(`${headline(report, style)}`);
  }
  out();
  out(table(facts(report, style)));
  out();
  out(style.bold("What to try next:"));
  for (const [command, why] of nextSteps(report)) out(`  ${style.dim(`# ${why}`)}\n  ${command}`);
}

function headline(report: CompactReport, style: Style): string {
  const reason = report.message ?? "";
  switch (report.status) {
    case "nothing_to_compact":
      return `${style.yellow("Nothing to compact:")} ${reason}.`;
    case "disabled":
      return `${style.red("Compaction is disabled:")} ${reason.replace(/^compaction is disabled: /, "")}.`;
    case "cancelled":
      return `${style.red("Cancelled:")} ${reason}.`;
    case "stale":
      return `${style.red("Not written:")} ${reason}.`;
    default:
      return reason;
  }
}

/**
 * `## Goal` headings in colour, `<read-files>` / `<modified-files>` sections as labelled lists,
 * the split-turn separator as a heading of its own. The words stay those the LLM will read.
 */
export function renderSummary(summary: string, style: Style): string {
  const sections = summary.replace(/<(read-files|modified-files)>\n([\s\S]*?)\n<\/\1>/g, (_match, tag: string, body: string) => {
    const title = tag === "read-files" ? "## Files read" : "## Files modified";
    return `${title}\n${body
      .split("\n")
      .map((file) => `- ${file}`)
      .join("\n")}`;
  });
  return sections
    .split("\n")
    .map((line) => {
      if (line === "**Turn Context (split turn):**") return style.bold(style.cyan("Turn Context (split turn)"));
      if (line === "---" || line === NO_PRIOR_HISTORY) return style.dim(line);
      if (line.startsWith("### ")) return style.bold(line.slice(4));
      if (line.startsWith("## ")) return style.bold(style.cyan(line.slice(3)));
      if (line.startsWith("- [x] ")) return `${style.green("✓")} ${line.slice(6)}`;
      if (line.startsWith("- [ ] ")) return `${style.yellow("○")} ${line.slice(6)}`;
      return line;
    })
    .join("\n");
}

function facts(report: CompactReport, style: Style): string[][] {
  const rows: string[][] = [];
  const label = (text: string) => style.dim(text);
  const { before, after } = report.contextTokens;
  const how = report.countMethod !== undefined ? `, ${report.countMethod}` : "";
  if (report.status === "committed") {
    const saved = before > 0 ? `${Math.round((100 * (before - after)) / before)}% smaller` : "";
    rows.push([
      label("Context"),
      `${formatCount(before)} → ${style.bold(formatCount(after))} tokens (${saved}${how})`.replace("(, ", "(").replace(" ()", ""),
    ]);
    const estimate = report.entry?.type === "compaction" ? report.entry.tokensBefore : null;
    if (typeof estimate === "number")
      rows.push([label("Estimate"), `${formatCount(estimate)} tokens before (${ESTIMATE_METHOD}; stored as tokensBefore)`]);
  } else {
    rows.push([
      label("Context"),
      `${formatCount(before)} tokens in ${plural(report.contextMessages.before, "message")}${how ? ` (${how.slice(2)})` : ""}`,
    ]);
  }
  if (report.rung !== undefined && report.status === "committed") rows.push([label("Rung"), describeRung(report)]);
  const stats = report.stats;
  if (stats && report.rung !== "prune") {
    const prefix = `the first ${plural(stats.turnPrefixMessages, "message")} of a long turn`;
    const summarized =
      !stats.isSplitTurn ? plural(stats.summarizedMessages, "message")
      : stats.summarizedMessages === 0 ? `${prefix} (nothing before it)`
      : `${plural(stats.summarizedMessages, "message")} + ${prefix}`;
    rows.push([label("Summarized"), summarized]);
    rows.push([
      label("Kept"),
      `${plural(stats.keptEntries, "entry", "entries")} verbatim${report.entry?.type === "compaction" ? `, from ${report.entry.firstKeptEntryId}` : ""}`,
    ]);
    rows.push([label("Split turn"), stats.isSplitTurn ? "yes: the cut fell inside a turn; its start is summarized separately" : "no"]);
  }
  const retention = report.retention ?? retentionOf(report.entry?.type === "compaction" ? report.entry.details : undefined);
  if (retention) {
    rows.push([label("Retention"), retentionLine(retention)]);
    const lost = lostLine(retention);
    if (lost) rows.push([label("Lost"), style.yellow(lost)]);
  }
  if (report.summarizer !== undefined) rows.push([label("Summarizer"), describeSummarizer(report, style)]);
  else if (report.pluginFailures?.length) rows.push([label("Plugins"), describeFailures(report, style)]);
  rows.push([label("Time"), `${(report.durationMs / 1000).toFixed(2)} s`]);
  rows.push([label("Session"), `${style.bold(report.sessionId)}${report.sessionName !== undefined ? ` "${report.sessionName}"` : ""}`]);
  return rows;
}

function describeRung(report: CompactReport): string {
  const pruned = report.pruned
    ? `${plural(report.pruned.outputs, "tool output")} hidden (${formatCount(report.pruned.tokensSaved)} tokens)`
    : "";
  if (report.rung === "prune") return `prune: ${pruned}, no model call`;
  return pruned ? `summarize + prune: ${pruned} in the kept part` : "summarize";
}

function describeSummarizer(report: CompactReport, style: Style): string {
  const summarizer = report.summarizer!;
  const details =
    report.entry?.type === "compaction" ? (report.entry.details as { fallback?: { from: string; error: string } } | undefined) : undefined;
  const failed = report.pluginFailures?.length ? describeFailures(report, style) : undefined;
  const notes = [
    ...(failed !== undefined ? [failed] : []),
    ...(details?.fallback ? [`fallback: ${details.fallback.error}`] : summarizer === "extractive" ? ["built in, offline"] : []),
  ];
  return notes.length > 0 ? `${summarizer} (${notes.join("; ")})` : summarizer;
}

/** "plugin X failed: TypeError: boom (at index.ts:3:11)", one per failed plugin. */
function describeFailures(report: CompactReport, style: Style): string {
  return report
    .pluginFailures!.map((failure) =>
      style.red(`plugin ${failure.pluginId} failed: ${failure.kind === "exception" ? "" : `${failure.kind}: `}${failure.message}`),
    )
    .join("; ");
}

function nextSteps(report: CompactReport): [string, string][] {
  const steps = baseSteps(report);
  const cli = report.cli ?? "base-context";
  return steps.map(([command, why]) => [command.replace(/^base-context\b/, cli), why]);
}

function baseSteps(report: CompactReport): [string, string][] {
  const id = report.sessionId;
  const steps: [string, string][] = [];
  if (report.status === "committed") {
    steps.push([`base-context show ${id} --brief`, "see the context the LLM gets now: the summary, then the kept messages"]);
    steps.push([`base-context tree ${id}`, "see the session tree with the compaction entry"]);
  } else if (report.status === "nothing_to_compact" && report.rung === "prune") {
    steps.push([`base-context compact ${id}`, "summarize instead: nothing old and large enough to prune"]);
  } else if (report.status === "nothing_to_compact") {
    const keepLess = smallerKeepRecent(report);
    if (keepLess !== undefined) steps.push([`base-context compact ${id} --keep-recent ${keepLess}`, "keep fewer recent tokens verbatim"]);
    steps.push([`base-context show ${id} --brief`, "see the context as it is"]);
  } else if (report.status === "disabled") {
    steps.push(["base-context settings", 'see where context.mode comes from; set it to "on" to compact']);
  }
  const usedModel = report.summarizer?.startsWith("openai:") === true;
  const fallback =
    report.entry?.type === "compaction" && (report.entry.details as { fallback?: unknown } | undefined)?.fallback !== undefined;
  if (fallback) {
    steps.push(["base-context doctor", "the model failed: check its settings and the connection"]);
  } else if (!usedModel && report.summarizerConfig.provider !== "extractive") {
    const { apiKeyEnv, keySet, modelNamed, settingsPath } = report.summarizerConfig;
    if (!modelNamed) {
      steps.push([
        "base-context doctor",
        `to have a model write the summary, name it: summarizer.model (and summarizer.baseURL for any OpenAI-compatible server) in ${settingsPath}, its key in $${apiKeyEnv}`,
      ]);
    } else if (!keySet) {
      steps.push([`export ${apiKeyEnv}=sk-…`, "the key of the model your settings name (summarizer.model)"]);
    }
  }
  if (report.status === "committed") {
    steps.push([`base-context compact ${id} --instructions "focus on …"`, "compact again, telling the summary what to focus on"]);
  }
  return steps;
}

/**
 * A --keep-recent worth trying after "nothing to compact": about half of what the context holds
 * (never the value that just found nothing), rounded; none when the context is tiny.
 */
export function smallerKeepRecent(report: Pick<CompactReport, "contextTokens" | "keepRecentTokens">): number | undefined {
  const current = report.keepRecentTokens ?? Number.POSITIVE_INFINITY;
  const half = Math.min(current, report.contextTokens.before) / 2;
  const step = half >= 10_000 ? 1000 : half >= 1000 ? 100 : 10;
  const suggestion = Math.floor(half / step) * step;
  return suggestion >= 100 && suggestion < current ? suggestion : undefined;
}

function rule(style: Style, title: string, width: number): string {
  const line = `──${title}`;
  return style.cyan(line + "─".repeat(Math.max(3, width - line.length)));
}
