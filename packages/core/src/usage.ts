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
import { isToolResultEntry, prunedOutputs, withPrunedCounts } from "./prune.js";
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

/**
 * The context's tokens: the latest usable report plus what came after it, and never less than the
 * stored counts of what the context holds: a report below them (another tokenizer, or a server that
 * counts only part of the request) would hide the entries' own size from the threshold.
 */
export function estimateContextTokens(path: readonly CountedEntry[]): ContextTokenEstimate {
  // Hidden tool outputs count their stubs: that is what the context holds.
  const selection = selectContextEntries(withPrunedCounts(path, prunedOutputs(path)));
  const measurable = selection.firstKeptFound;
  // Only replies after the latest compaction measured the context as it is now.
  const candidates = selection.afterCompaction;
  for (let i = candidates.length - 1; i >= 0; i--) {
    const { entry } = candidates[i]!;
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    const usageTokens = usableAssistantUsage(entry.message);
    if (usageTokens === undefined) continue;
    const trailingTokens = sumTokens(candidates.slice(i + 1));
    // A prune after the reply hid outputs the reply's usage still measured in full.
    const prunedSince = savedByPrunesAfter(path, entry.id);
    return {
      tokens: Math.max(Math.max(0, usageTokens - prunedSince) + trailingTokens, selectionTokens(selection)),
      usageTokens,
      trailingTokens,
      usageEntryId: entry.id,
      measurable,
    };
  }
  const all = selectionTokens(selection);
  return { tokens: all, usageTokens: null, trailingTokens: all, measurable };
}

/**
 * What prune entries after `entryId` save on outputs that lie before it (outputs after it are in
 * the trailing counts, already counted as stubs).
 */
function savedByPrunesAfter(path: readonly CountedEntry[], entryId: string): number {
  let prunesAfter: CountedEntry[] | undefined;
  let index = path.length - 1;
  for (; index >= 0 && path[index]!.entry.id !== entryId; index--) {
    if (path[index]!.entry.type === "prune") (prunesAfter ??= []).push(path[index]!);
  }
  if (!prunesAfter || index < 0) return 0;
  // Tool results before the reply, with their stored counts (what the reply's usage measured).
  const before = new Map<string, number>();
  for (let i = 0; i < index; i++) if (isToolResultEntry(path[i]!.entry)) before.set(path[i]!.entry.id, path[i]!.tokens);
  // Those a prune entry before the reply hid were measured as stubs already.
  const earlier = prunedOutputs(path.slice(0, index));
  const seen = new Set<string>();
  let saved = 0;
  // Oldest prune entry first: the first to name an output decides its stub, as in prunedOutputs.
  for (const { entry } of prunesAfter.reverse()) {
    if (entry.type !== "prune") continue;
    for (const item of entry.hidden) {
      const stored = before.get(item.entryId);
      if (stored === undefined || earlier.has(item.entryId) || seen.has(item.entryId)) continue;
      seen.add(item.entryId);
      saved += Math.max(0, stored - item.stubTokens);
    }
  }
  return saved;
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
  /** The sizes the threshold and a compaction use for this window. */
  settings: { reserveTokens: number; keepRecentTokens: number };
  reason?: string;
}

/**
 * @param settings the settings as they apply to this window (the daemon caps the sizes the user did
 *   not set, see window-fit.ts).
 * @param conflict why those settings cannot fit the window, added to `reason`.
 */
export function contextUsage(
  path: readonly CountedEntry[],
  contextWindow: number,
  settings: UsageSettings,
  conflict?: string,
): ContextUsageReport {
  const estimate = estimateContextTokens(path);
  const threshold = compactionThreshold(contextWindow, settings);
  const disabled = thresholdDisabledReason(settings);
  const compact = shouldCompact(estimate.tokens, contextWindow, settings);
  const reasons = [disabled ?? (compact ? `${estimate.tokens} tokens > threshold ${threshold}` : undefined), conflict];
  const reason = reasons.filter((text) => text !== undefined).join("; ") || undefined;
  return {
    tokens: estimate.tokens,
    usageTokens: estimate.usageTokens,
    trailingTokens: estimate.trailingTokens,
    threshold,
    shouldCompact: compact,
    settings: { reserveTokens: settings.compaction.reserveTokens, keepRecentTokens: settings.compaction.keepRecentTokens },
    ...(reason !== undefined ? { reason } : {}),
  };
}
