/**
 * What a turn boundary calls for (docs/design.md#threshold, #turn-boundaries): nothing, a threshold
 * compaction, or an overflow compaction — decided from the session path and the turn's reply
 * alone, without I/O, so a retried `turn/end` decides the same way and the rules read as a table.
 */
import type { AssistantMessage, CompactionEntry } from "@base-context/protocol";
import {
  compactionThreshold,
  estimateContextTokens,
  thresholdDisabledReason,
  usableAssistantUsage,
  type CountedEntry,
  type ModelRef,
  type UsageSettings,
} from "@base-context/core";
import { describeOverflow, detectContextOverflow, type OverflowSignal } from "./overflow.js";
import { overflowAlreadyRecovered } from "./overflow-recovery.js";
import type { TurnReply } from "./turn-end-reply.js";

export interface TurnEndFacts {
  /**
   * The context path (a suffix from the latest compaction's first kept entry, or the whole path)
   * up to the reply included, or up to the leaf when the turn has no reply.
   */
  readonly path: readonly CountedEntry[];
  readonly reply?: TurnReply | undefined;
  /** The model the session was on before the reply (latest model_change or reply naming one). */
  readonly sessionModel?: ModelRef | undefined;
  readonly contextWindow: number;
  readonly settings: UsageSettings;
  /** Whether a compaction on the path was made to recover from an overflow (its run's reason). */
  readonly isOverflowCompaction: (entry: CompactionEntry) => boolean;
}

/** The context estimate the threshold was checked with. */
export interface UsageCheck {
  readonly tokens: number;
  readonly threshold: number;
}

export type TurnEndPlan =
  | { readonly action: "none"; readonly outcome: "completed" | "aborted"; readonly note?: string; readonly usage?: UsageCheck }
  /** An overflow the daemon will not compact for; the note says why. */
  | { readonly action: "none"; readonly outcome: "overflow_unrecovered"; readonly overflow: OverflowSignal; readonly note: string }
  | { readonly action: "compact"; readonly reason: "threshold"; readonly usage: UsageCheck }
  | { readonly action: "compact"; readonly reason: "overflow"; readonly overflow: OverflowSignal; readonly failedEntryId: string };

export function planTurnEnd(facts: TurnEndFacts): TurnEndPlan {
  const { reply } = facts;
  if (reply?.message.stopReason === "aborted") {
    return { action: "none", outcome: "aborted", note: "the turn was aborted: no compaction, no automatic follow-up" };
  }

  const replyIndex = reply ? facts.path.findIndex((item) => item.entry.id === reply.entryId) : -1;
  const before = replyIndex >= 0 ? facts.path.slice(0, replyIndex) : facts.path;
  const stale = reply !== undefined && repliedBeforeLatestCompaction(before, reply.message);

  const detected = reply ? detectContextOverflow(reply.message, facts.contextWindow) : undefined;
  // Stale usage measured a context that no longer exists: it proves no overflow either.
  const overflow = stale && detected?.kind === "usage" ? undefined : detected;
  if (reply && overflow) {
    const planned = planOverflow(facts, reply, overflow, before, stale);
    if (planned) return planned;
  }

  // A failed reply reports no usable usage and is no reason to compact (pi does the same).
  if (reply?.message.stopReason === "error") return { action: "none", outcome: "completed" };
  // Its usage measured a context that the latest compaction replaced: the stored counts measure this one.
  const staleUsage = stale && usableAssistantUsage(reply.message) !== undefined;
  const staleNote = staleUsage ? "the reply's usage predates the latest compaction: the threshold was checked with the stored counts" : undefined;

  const usage: UsageCheck = {
    tokens: estimateContextTokens(staleUsage ? withoutUsage(facts.path, reply.entryId) : facts.path).tokens,
    threshold: compactionThreshold(facts.contextWindow, facts.settings),
  };
  // Strictly above: a context exactly at the threshold still leaves the reserve free.
  if (usage.tokens <= usage.threshold) return { action: "none", outcome: "completed", usage, ...(staleNote ? { note: staleNote } : {}) };
  const disabled = thresholdDisabledReason(facts.settings);
  if (disabled) {
    return {
      action: "none",
      outcome: "completed",
      usage,
      note: `${usage.tokens} tokens > threshold ${usage.threshold}, but ${disabled}: not compacting`,
    };
  }
  return { action: "compact", reason: "threshold", usage };
}

/** The plan for an overflow reply; undefined when it does not count (another model's silent overflow). */
function planOverflow(
  facts: TurnEndFacts,
  reply: TurnReply,
  overflow: OverflowSignal,
  before: readonly CountedEntry[],
  stale: boolean,
): TurnEndPlan | undefined {
  const described = describeOverflow(overflow);
  const otherModel = modelMismatch(reply.message, facts.sessionModel);
  if (otherModel) {
    // The reply came from a model the session is not on: its window says nothing about this context.
    return overflow.kind === "error"
      ? { action: "none", outcome: "completed", note: `${described} — ignored: it came from ${otherModel}` }
      : undefined;
  }
  const unrecovered = (why: string): TurnEndPlan => ({
    action: "none",
    outcome: "overflow_unrecovered",
    overflow,
    note: `${described} — ${why}`,
  });
  if (stale) return unrecovered("not compacting again: the request was sent before the latest compaction");
  // Overflow recovery is automatic compaction too: off with threshold compaction (docs/design.md#when-compaction-is-off:
  // only manual /compact stays available with compaction.enabled false).
  const disabled = thresholdDisabledReason(facts.settings);
  if (disabled) return unrecovered(`automatic compaction is off (${disabled})`);
  if (overflowAlreadyRecovered(before, facts.isOverflowCompaction)) {
    return unrecovered(
      "the context was already compacted once for an overflow since the last successful turn or new input; not compacting again",
    );
  }
  return { action: "compact", reason: "overflow", overflow, failedEntryId: reply.entryId };
}

/** The path with the reply's usage report left out (its entry as stored otherwise). */
function withoutUsage(path: readonly CountedEntry[], entryId: string): readonly CountedEntry[] {
  return path.map((item) => {
    const { entry } = item;
    if (entry.id !== entryId || entry.type !== "message" || entry.message.role !== "assistant") return item;
    const { usage: _usage, ...message } = entry.message;
    return { ...item, entry: { ...entry, message } };
  });
}

/** "provider/model" of the reply when it names a model other than the session's, else undefined. */
function modelMismatch(message: AssistantMessage, sessionModel: ModelRef | undefined): string | undefined {
  const { provider, model } = message;
  if (!sessionModel || !provider || !model) return undefined;
  if (provider === sessionModel.provider && model === sessionModel.modelId) return undefined;
  return `${provider}/${model}, not the session's ${sessionModel.provider}/${sessionModel.modelId}`;
}

/**
 * True when the reply's request started no later than the latest compaction on the path before
 * it was committed: message timestamps (ms) are set when the request starts, entry timestamps
 * when the entry is written. A reply without a timestamp cannot tell and counts as fresh.
 */
function repliedBeforeLatestCompaction(before: readonly CountedEntry[], message: AssistantMessage): boolean {
  if (message.timestamp === undefined) return false;
  for (let i = before.length - 1; i >= 0; i--) {
    const { entry } = before[i]!;
    if (entry.type !== "compaction") continue;
    const compactedMs = Date.parse(entry.timestamp);
    return !Number.isNaN(compactedMs) && message.timestamp <= compactedMs;
  }
  return false;
}
