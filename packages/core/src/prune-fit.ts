/**
 * Hiding only what is needed (docs/compaction-rungs.md#only-what-is-needed): with the model's
 * window known, a prune plan's outputs are hidden oldest first until the context is down to a
 * target, and never so many that it falls under a floor (the kept part's size): the output that
 * would take it under is cut to an excerpt instead, its beginning and end filling what is left.
 */
import type { PrunedOutput } from "@base-context/protocol";
import { isContextVisible } from "./entry-messages.js";
import { savedBy, toolCallArguments, type PrunePlan } from "./prune.js";
import { cutOutput, resultText, type ToolResultItem } from "./truncation.js";
import type { CountedEntry } from "./types.js";

export interface PruneGoal {
  /** The tokens the plan's outputs are counted in now (the context, or the kept part). */
  readonly tokens: number;
  /** Stop once at or under this many tokens; absent: hide every output of the plan the floor allows. */
  readonly targetTokens?: number;
  /** Never under this many tokens. */
  readonly floorTokens: number;
}

/**
 * The plan's outputs (oldest first, as the planners give them) to hide for `goal`: whole while
 * the tokens stay at or above the floor and above the target; the one that would take them under
 * the floor is cut to land on the larger of target and floor, and nothing after it is taken.
 */
export function fitPlan(path: readonly CountedEntry[], plan: PrunePlan, goal: PruneGoal): PrunePlan {
  if (plan.hidden.length === 0) return plan;
  const landing = Math.max(goal.targetTokens ?? goal.floorTokens, goal.floorTokens);
  const chosen: PrunedOutput[] = [];
  let tokens = goal.tokens;
  for (const item of plan.hidden) {
    if (goal.targetTokens !== undefined && tokens <= goal.targetTokens) break;
    const saved = Math.max(0, item.tokens - item.stubTokens);
    if (tokens - saved >= goal.floorTokens) {
      chosen.push(item);
      tokens -= saved;
      continue;
    }
    const cut = cutTo(path, item, item.tokens - (tokens - landing));
    if (cut) chosen.push(cut);
    break;
  }
  const whole = chosen.length === plan.hidden.length && chosen.every((item, i) => item === plan.hidden[i]);
  return whole ? plan : { hidden: chosen, tokensSaved: savedBy(chosen) };
}

/** The output cut to keep `keepTokens`, or undefined when that saves nothing (or it has no text to cut). */
function cutTo(path: readonly CountedEntry[], item: PrunedOutput, keepTokens: number): PrunedOutput | undefined {
  if (keepTokens >= item.tokens) return undefined;
  const counted = path.find((candidate) => candidate.entry.id === item.entryId) as ToolResultItem | undefined;
  if (!counted || resultText(counted).length === 0) return undefined;
  const args = toolCallArguments(path).get(counted.entry.message.toolCallId);
  const cut = cutOutput(counted, args, Math.max(0, keepTokens), "atLeast");
  return cut.stubTokens < cut.tokens ? cut : undefined;
}

/** Tokens of the context-visible entries from `fromIndex` on, with the counts given (hidden outputs as stubs). */
export function tokensFrom(counted: readonly CountedEntry[], fromIndex: number): number {
  let tokens = 0;
  for (let i = Math.max(0, fromIndex); i < counted.length; i++) if (isContextVisible(counted[i]!.entry)) tokens += counted[i]!.tokens;
  return tokens;
}
