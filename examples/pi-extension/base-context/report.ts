/**
 * What the user is told about each summary, in words: who wrote it (a plugin, pi's model lent to
 * the daemon, a model of the daemon's, the extractive fallback), whether a fallback stood in and
 * why, and what the retention check found. Pure: index.ts puts these lines where pi keeps them
 * (the footer's status line, a widget above the editor), which survive the chat rebuild that
 * follows a compaction or a `/tree` summary.
 */
import type { RetentionReport, SummarizeResult } from "@base-context/protocol";

export type SummaryKind = "compaction" | "branch summary";

/** The last summary the extension asked for, as the user should see it. */
export interface SummaryReport {
  readonly kind: SummaryKind;
  readonly at: Date;
  /** Who wrote it, in words ("plugin global:marker", "pi's model (gpt-5)", …). */
  readonly writer: string;
  /** Set when a fallback wrote it: what failed and what stood in. */
  readonly fallback?: string;
  /** The retention line ("kept 3/3 files, 2/2 requests"), when the daemon checked it. */
  readonly retention?: string;
  /** The first items the summary lost, when it lost any. */
  readonly lost?: string;
  /** Set when the daemon could not write it: why, and that pi wrote it instead. */
  readonly warning?: string;
  /** Set when pi's compaction settings cannot fit its model's window (the daemon's words). */
  readonly windowConflict?: string;
}

/** How the daemon words settings that cannot fit the window, at the end of a summary's `message`. */
const WINDOW_CONFLICT = /the compaction settings cannot fit the model's window.*$/s;

interface FallbackRecord {
  from: string;
  error: string;
}

/** The report of a summary the daemon wrote. */
export function reportOf(kind: SummaryKind, result: SummarizeResult, at = new Date()): SummaryReport {
  const writer = writerName(result.summarizer, result.pluginId);
  // A split turn's two parts fail alike: each distinct failure is said once.
  const failures = [...new Set(fallbacksOf(result.details).map((record) => `${writerName(record.from)} failed (${reasonOf(record.error)})`))];
  return {
    kind,
    at,
    writer,
    ...(failures.length > 0 ? { fallback: `${failures.join("; then ")}; ${writer} wrote it instead` } : {}),
    ...(result.retention ? { retention: retentionLine(result.retention) } : {}),
    ...(result.retention && lostLine(result.retention) ? { lost: lostLine(result.retention)! } : {}),
    ...(WINDOW_CONFLICT.test(result.message) ? { windowConflict: WINDOW_CONFLICT.exec(result.message)![0] } : {}),
  };
}

/** The report of a summary the daemon could not write (pi writes its own). */
export function failureReport(kind: SummaryKind, daemon: string, why: string, at = new Date()): SummaryReport {
  return { kind, at, writer: "pi itself", warning: `${kind} by ${daemon} failed (${oneLine(why)}); pi writes it instead` };
}

/** `details.summarizer` / `summarizer` ids in words. */
export function writerName(summarizer: string | undefined, pluginId?: string): string {
  if (pluginId !== undefined) return `plugin ${pluginId}`;
  if (!summarizer) return "the daemon";
  return summarizer
    .split("+")
    .map((id) => {
      if (id.startsWith("plugin:")) return `plugin ${id.slice("plugin:".length)}`;
      if (id === "client") return "pi's model";
      if (id.startsWith("client:")) return `pi's model (${id.slice("client:".length)})`;
      if (id === "extractive") return "the extractive summarizer";
      if (id === "none") return "nobody (nothing new: the previous summary carried over)";
      const colon = id.indexOf(":");
      return colon > 0 ? `the daemon's ${id.slice(0, colon)} model ${id.slice(colon + 1)}` : id;
    })
    .join(" and ");
}

/** The footer's one line: short, always there until the next summary. */
export function statusLine(report: SummaryReport): string {
  if (report.warning) return `Base Context ⚠ ${report.kind}: daemon failed, pi wrote it`;
  const fallback = report.fallback ? " (fallback)" : "";
  return `Base Context: ${report.kind} by ${report.writer}${fallback}${report.retention ? ` · ${report.retention}` : ""}`;
}

/** The widget above the editor: only for what needs attention (a warning, a fallback), else nothing. */
export function attentionLines(report: SummaryReport): string[] | undefined {
  if (report.warning) return [`⚠ Base Context: ${report.warning}`];
  if (report.fallback) return [`⚠ Base Context: this ${report.kind} came from a fallback: ${report.fallback}`];
  if (report.windowConflict) return [`⚠ Base Context: pi's ${report.windowConflict}`];
  return undefined;
}

/** `/bc-status`'s lines about the last summary. */
export function summaryLines(report: SummaryReport | undefined): string[] {
  if (!report) return ["Last summary: none yet in this pi session"];
  const lines = [`Last summary: ${report.kind} at ${report.at.toLocaleTimeString()}, written by ${report.writer}`];
  if (report.warning) lines.push(`Warning: ${report.warning}`);
  if (report.fallback) lines.push(`Fallback: ${report.fallback}`);
  if (report.retention) lines.push(`Retention: ${report.retention}`);
  if (report.lost) lines.push(`Lost: ${report.lost}`);
  if (report.windowConflict) lines.push(`Window: pi's ${report.windowConflict}`);
  return lines;
}

const PROBES = ["files", "errors", "constraints", "requests", "plan"] as const;
const SINGULAR: Record<(typeof PROBES)[number], string> = {
  files: "file",
  errors: "error",
  constraints: "constraint",
  requests: "request",
  plan: "plan",
};

/** "kept 3/3 files, 1/2 errors (repair added 1 item)", as `base-context compact` prints it. */
export function retentionLine(report: RetentionReport): string {
  const parts = PROBES.filter((kind) => report[kind].total > 0).map((kind) => `${report[kind].kept}/${report[kind].total} ${kind}`);
  let line = parts.length > 0 ? `kept ${parts.join(", ")}` : "nothing to keep";
  const repaired = report.repaired ? report.repaired.files + report.repaired.errors + report.repaired.constraints : 0;
  if (repaired > 0) line += ` (repair added ${repaired} item${repaired === 1 ? "" : "s"})`;
  return line;
}

/** The first three items lost, e.g. `error "TypeError: …"` (+ how many more), or undefined when none. */
export function lostLine(report: RetentionReport): string | undefined {
  const total = PROBES.reduce((sum, kind) => sum + report[kind].total - report[kind].kept, 0);
  if (total === 0) return undefined;
  const lost = PROBES.flatMap((kind) => report.missing[kind].map((text) => `${SINGULAR[kind]} "${clip(text, 70)}"`));
  const shown = lost.slice(0, 3);
  return `${shown.join("; ")}${total > shown.length ? ` (+${total - shown.length} more)` : ""}`;
}

function fallbacksOf(details: unknown): FallbackRecord[] {
  if (typeof details !== "object" || details === null) return [];
  const { fallbacks, fallback } = details as { fallbacks?: unknown; fallback?: unknown };
  const records = Array.isArray(fallbacks) ? fallbacks : fallback !== undefined ? [fallback] : [];
  return records.filter(
    (record): record is FallbackRecord =>
      typeof record === "object" && record !== null && typeof record.from === "string" && typeof record.error === "string",
  );
}

/**
 * The model's own error, without the daemon's framing: `summarizer client failed: the client "pi"
 * answered model/complete with an error (-32603): 500 …` → `500 …` (the writer is named already).
 */
function reasonOf(error: string): string {
  return oneLine(error.replace(/^summarizer \S+ failed: /, "").replace(/^the client "[^"]*" answered model\/complete with an error \(-?\d+\): /, ""));
}

function oneLine(text: string): string {
  return clip(text.replace(/\s+/g, " ").trim(), 200);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
