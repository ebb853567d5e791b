/**
 * Where to cut a session for compaction (docs/design.md#range-and-cut-point,
 * #split-turns). Everything before the cut is summarized, everything from
 * it on is kept verbatim.
 */
import type { SessionEntry } from "@base-context/protocol";
import { isContextVisible, isMetadataEntry } from "../entry-messages.js";
import type { CountedEntry } from "../types.js";

/**
 * Entries the kept part may start with. Never a tool result: it must stay right after the
 * assistant message that called the tool.
 */
export function isValidCutPoint(entry: SessionEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
  if (entry.type !== "message") return false;
  const role = entry.message.role;
  return role === "user" || role === "assistant" || role === "bashExecution" || role === "custom";
}

/**
 * Entries that open a turn: everything the LLM reads as a user message. (pi leaves role
 * `custom` messages out here although it counts `custom_message` entries; we treat both alike,
 * since both reach the model as user messages.)
 */
export function isTurnStart(entry: SessionEntry): boolean {
  return isValidCutPoint(entry) && !(entry.type === "message" && entry.message.role === "assistant");
}

/** The turn start at or before `index`, not before `rangeStart`; -1 when the range has none. */
export function findTurnStartIndex(path: readonly CountedEntry[], index: number, rangeStart: number): number {
  for (let i = index; i >= rangeStart; i--) {
    if (isTurnStart(path[i]!.entry)) return i;
  }
  return -1;
}

export interface CutPoint {
  /** Index of the first kept entry (metadata directly before the cut included). */
  firstKeptIndex: number;
  /** Index of the message the cut landed on (≥ firstKeptIndex). */
  cutIndex: number;
  /** Index of the turn start when the cut splits a turn, else -1. */
  turnStartIndex: number;
  isSplitTurn: boolean;
}

export interface CutOptions {
  /**
   * Never keep less than `keepRecentTokens`: when the budget is reached on an entry the kept part
   * cannot start with (a tool result), cut at the cut point before it rather than after it. Used
   * when a window is known: the kept part is then the least of the recent conversation the model
   * keeps seeing (docs/compaction-rungs.md#settings-that-fit-the-window).
   */
  readonly keepAtLeastBudget?: boolean;
}

/**
 * Walk back from the newest entry of [rangeStart, rangeEnd), summing the stored counts of
 * context-visible entries, until the sum reaches `keepRecentTokens`; cut at the nearest valid
 * cut point at or after the entry that reached it (at or before it with `keepAtLeastBudget`).
 * When the budget is reached inside trailing tool results (no cut point at or after it), cut at
 * the latest cut point before them instead of keeping everything. When the range is under budget,
 * the cut is its first cut point (nothing to summarize). Returns undefined when the range has no
 * valid cut point at all.
 */
export function findCutPoint(
  path: readonly CountedEntry[],
  rangeStart: number,
  rangeEnd: number,
  keepRecentTokens: number,
  options: CutOptions = {},
): CutPoint | undefined {
  const cutPoints: number[] = [];
  for (let i = rangeStart; i < rangeEnd; i++) {
    if (isValidCutPoint(path[i]!.entry)) cutPoints.push(i);
  }
  const firstCutPoint = cutPoints[0];
  if (firstCutPoint === undefined) return undefined;

  let cutIndex = firstCutPoint;
  let accumulated = 0;
  for (let i = rangeEnd - 1; i >= rangeStart; i--) {
    const item = path[i]!;
    // A compaction inside the range is replaced by the new summary; metadata costs nothing.
    if (!isContextVisible(item.entry)) continue;
    accumulated += item.tokens;
    if (accumulated < keepRecentTokens) continue;
    const atOrAfter = cutPoints.find((index) => index >= i);
    const atOrBefore = options.keepAtLeastBudget ? cutPoints.findLast((index) => index <= i) : undefined;
    cutIndex = atOrBefore ?? atOrAfter ?? cutPoints[cutPoints.length - 1]!;
    break;
  }

  // Model/thinking changes, labels… right before the cut describe what follows: keep them with it.
  let firstKeptIndex = cutIndex;
  while (firstKeptIndex > rangeStart && isMetadataEntry(path[firstKeptIndex - 1]!.entry)) firstKeptIndex--;

  // Judged on the message the cut landed on, so leading metadata never turns a clean cut at a
  // user message into a split turn.
  if (isTurnStart(path[cutIndex]!.entry)) {
    return { firstKeptIndex, cutIndex, turnStartIndex: -1, isSplitTurn: false };
  }
  const turnStartIndex = findTurnStartIndex(path, cutIndex - 1, rangeStart);
  return { firstKeptIndex, cutIndex, turnStartIndex, isSplitTurn: turnStartIndex >= 0 };
}
