/**
 * The status-bar item: how full the open session's context is, against the window set in
 * `baseContext.contextWindow`, from `context/usage` (pi's estimate: the model's last reported
 * usage plus what came after it, which the compaction threshold is checked against).
 */
import type { ContextUsage, ResultOf } from "@base-context/protocol";
import { formatCount, shortCount } from "./format.js";

export type Usage = ResultOf<typeof ContextUsage>;

export interface UsageStatus {
  /** With a codicon: `$(dashboard) 48.2k/200k · 24%`. */
  text: string;
  /** Markdown. */
  tooltip: string;
  /** `warning` once the daemon says to compact, `error` past the window. */
  severity: "normal" | "warning" | "error";
}

export function usageStatus(usage: Usage, contextWindow: number, sessionTitle: string): UsageStatus {
  const percent = Math.round((usage.tokens / contextWindow) * 100);
  const over = usage.tokens > contextWindow;
  const severity = over ? "error" : usage.shouldCompact ? "warning" : "normal";
  const icon = over ? "$(error)" : usage.shouldCompact ? "$(warning)" : "$(dashboard)";
  const lines = [
    `**${sessionTitle}**`,
    "",
    `${formatCount(usage.tokens)} of ${formatCount(contextWindow)} tokens (${percent}%): what the model sees now, estimated as the ` +
      "compaction threshold is (the model's last reported usage plus what came after it).",
    "",
    `Compaction threshold: ${formatCount(usage.threshold)} tokens (the window less \`compaction.reserveTokens\`, ` +
      `${formatCount(usage.settings.reserveTokens)} here).`,
  ];
  if (usage.usageTokens !== null) {
    lines.push("", `Last usage the model reported: ${formatCount(usage.usageTokens)}, then ${formatCount(usage.trailingTokens)} tokens after it.`);
  }
  if (usage.shouldCompact) lines.push("", `**Past the threshold: compact now**${usage.reason ? ` (${usage.reason})` : ""}.`);
  else if (usage.reason) lines.push("", `The daemon notes: ${usage.reason}.`);
  if (over) lines.push("", "**Over the window**: the model cannot take this context as it is.");
  lines.push("", "Click to see what the model sees. The window is the setting `baseContext.contextWindow`.");
  return { text: `${icon} ${shortCount(usage.tokens)}/${shortCount(contextWindow)} · ${percent}%`, tooltip: lines.join("\n"), severity };
}
