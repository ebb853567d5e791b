/**
 * Context usage and the compaction threshold (docs/design.md#threshold).
 *
 * The provider's own report is the best measure of what the context cost: the last assistant
 * reply's `usage`. Entries appended after that reply are not in it, so their stored counts are
 * added. A reply older than the latest compaction measured a context that no longer exists and
 * is ignored; aborted and failed replies carry no reliable usage; a zero usage is no report.
 */
import type { AssistantMessage, Settings, Usage } from "@base-context/protocol";
import { selectContextEntries, selectionTokens, sumTokens } from "./context-selection.js";
import type { CountedEntry } from "./types.js";

/** Total tokens of a usage report: `totalTokens`, or the sum of its parts when that is absent or 0. */
export function usageTotalTokens(usage: Usage): number {
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

/** The usage of an assistant reply when it can be trusted, else undefined. */
export function usableAssistantUsage(message: AssistantMessage): number | undefined {
  if (message.stopReason === "aborted" || message.stopReason === "error") return undefined;
  if (!message.usage) return undefined;
  const total = usageTotalTokens(message.usage);
  return total > 0 ? total : undefined;
}

export interface ContextTokenEstimate {
  /** The estimate: usage + trailing, or the sum of all counts without usable usage. */
  tokens: number;
  /** The usage the estimate is based on, null when none was usable. */
  usageTokens: number | null;
  /** Stored counts of the context entries after the usage report (all of them without one). */
  trailingTokens: number;
  /** The assistant entry whose usage was used. */
  usageEntryId?: string;
  /** False when the latest compaction's kept tail is missing from the path (see ContextSelection). */
  measurable: boolean;
}

export function estimateContextTokens(path: readonly CountedEntry[]): ContextTokenEstimate {
  const selection = selectContextEntries(path);
  const measurable = selection.firstKeptFound;
  // Only replies after the latest compaction measured the context as it is now.
  const candidates = selection.afterCompaction;
  for (let i = candidates.length - 1; i >= 0; i--) {
    const { entry } = candidates[i]!;
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    const usageTokens = usableAssistantUsage(entry.message);
    if (usageTokens === undefined) continue;
    const trailingTokens = sumTokens(candidates.slice(i + 1));
    return { tokens: usageTokens + trailingTokens, usageTokens, trailingTokens, usageEntryId: entry.id, measurable };
  }
  const all = selectionTokens(selection);
  return { tokens: all, usageTokens: null, trailingTokens: all, measurable };
}

export type UsageSettings = Pick<Settings, "compaction" | "context">;

/** Why threshold compaction is off, or undefined when it is on. */
export function thresholdDisabledReason(settings: UsageSettings): string | undefined {
  if (settings.context.mode !== "on") return 'context.mode is "off"';
  if (!settings.compaction.enabled) return "compaction.enabled is false";
  return undefined;
}

export function compactionThreshold(contextWindow: number, settings: UsageSettings): number {
  return contextWindow - settings.compaction.reserveTokens;
}

/** Strictly above `contextWindow − reserveTokens`, and only when threshold compaction is on. */
export function shouldCompact(contextTokens: number, contextWindow: number, settings: UsageSettings): boolean {
  if (thresholdDisabledReason(settings) !== undefined) return false;
  return contextTokens > compactionThreshold(contextWindow, settings);
}

/** The `context/usage` result. */
export interface ContextUsageReport {
  tokens: number;
  usageTokens: number | null;
  trailingTokens: number;
  threshold: number;
  shouldCompact: boolean;
  reason?: string;
}

export function contextUsage(
  path: readonly CountedEntry[],
  contextWindow: number,
  settings: UsageSettings,
): ContextUsageReport {
  const estimate = estimateContextTokens(path);
  const threshold = compactionThreshold(contextWindow, settings);
  const disabled = thresholdDisabledReason(settings);
  const compact = shouldCompact(estimate.tokens, contextWindow, settings);
  const reason =
    disabled ?? (compact ? `${estimate.tokens} tokens > threshold ${threshold}` : undefined);
  return {
    tokens: estimate.tokens,
    usageTokens: estimate.usageTokens,
    trailingTokens: estimate.trailingTokens,
    threshold,
    shouldCompact: compact,
    ...(reason !== undefined ? { reason } : {}),
  };
}
