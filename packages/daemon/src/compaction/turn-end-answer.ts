/**
 * The turn/end reply (`turn/end` in docs/protocol.md) from the plan and what the checkpoint did: how
 * the turn ended for the follow-up rule, the checkpoint to report, and one human message.
 */
import type { CompactionResult, ResultOf, TurnEnd, ValidParamsOf } from "@base-context/protocol";
import { describeOverflow } from "./overflow.js";
import type { CheckpointOutcome } from "./turn-end-checkpoint.js";
import { decideFollowUp, type TurnOutcome } from "./turn-end-follow-up.js";
import type { TurnEndPlan } from "./turn-end-plan.js";

export type TurnEndAnswer = ResultOf<typeof TurnEnd>;
type TurnEndParams = ValidParamsOf<typeof TurnEnd>;

/** What the answer is made of before the follow-up is decided. */
interface Resolution {
  outcome: TurnOutcome;
  notes: string[];
  checkpoint?: CompactionResult;
  overflowRecovered?: boolean;
  failedAfterCheckpoint?: string;
}

export function answerTurnEnd(
  params: Pick<TurnEndParams, "toolBatch" | "queuedInputs">,
  plan: TurnEndPlan,
  checkpoint: CheckpointOutcome | undefined,
  replyEntryId: string | undefined,
): TurnEndAnswer {
  const resolution = resolve(plan, checkpoint);
  const answer: TurnEndAnswer = {
    followUp: decideFollowUp({ outcome: resolution.outcome, toolBatch: params.toolBatch, queuedInputs: params.queuedInputs }),
  };
  if (resolution.checkpoint) answer.checkpoint = resolution.checkpoint;
  if (resolution.notes.length > 0) answer.message = resolution.notes.join("; ");
  if (replyEntryId !== undefined) answer.assistantEntryId = replyEntryId;
  if ("usage" in plan && plan.usage) answer.usage = { ...plan.usage };
  if (resolution.overflowRecovered !== undefined) answer.overflow = { recovered: resolution.overflowRecovered };
  if (resolution.failedAfterCheckpoint !== undefined) answer.failedAfterCheckpoint = resolution.failedAfterCheckpoint;
  return answer;
}

/** The same answer after a later step failed: the checkpoint stands, nothing resumes. */
export function failedAfterCheckpoint(answer: TurnEndAnswer, failure: string): TurnEndAnswer {
  const message = afterCheckpointNote(failure);
  return {
    ...answer,
    followUp: "none",
    failedAfterCheckpoint: failure,
    message: answer.message ? `${answer.message}; ${message}` : message,
  };
}

const afterCheckpointNote = (failure: string) =>
  `checkpoint committed, then ${failure}; it is not summarized again and nothing resumes automatically`;

function resolve(plan: TurnEndPlan, checkpoint: CheckpointOutcome | undefined): Resolution {
  if (plan.action === "none") {
    const notes = plan.note !== undefined ? [plan.note] : [];
    if (plan.outcome === "overflow_unrecovered") return { outcome: { kind: "overflow_unrecovered" }, notes, overflowRecovered: false };
    if (plan.outcome === "aborted") return { outcome: { kind: "aborted" }, notes };
    return { outcome: { kind: "completed", checkpoint: false }, notes };
  }
  if (!checkpoint) throw new Error("a compaction was planned but not run");

  const overflow = plan.reason === "overflow";
  const notes = overflow ? [describeOverflow(plan.overflow)] : [`${plan.usage.tokens} tokens > threshold ${plan.usage.threshold}`];
  const unrecovered = (): Resolution => ({ outcome: { kind: "overflow_unrecovered" }, notes, overflowRecovered: false });
  const completed = (): Resolution => ({ outcome: { kind: "completed", checkpoint: false }, notes });

  switch (checkpoint.kind) {
    case "committed":
      notes.push(overflow ? "compacted; retry the request" : committedNote(checkpoint.result));
      return overflow
        ? { outcome: { kind: "overflow_recovered" }, notes, checkpoint: checkpoint.result, overflowRecovered: true }
        : { outcome: { kind: "completed", checkpoint: true }, notes, checkpoint: checkpoint.result };
    case "not_committed":
      notes.push(
        `the ${plan.reason} compaction wrote nothing (${checkpoint.result.status}${checkpoint.result.message ? `: ${checkpoint.result.message}` : ""})`,
      );
      return { ...(overflow ? unrecovered() : completed()), checkpoint: checkpoint.result };
    case "failed":
      notes.push(`the ${plan.reason} compaction failed: ${checkpoint.error}`);
      return overflow ? unrecovered() : completed();
    case "busy":
      notes.push(`not compacting: a ${checkpoint.holder} is already running on this session`);
      return overflow ? unrecovered() : completed();
    case "failed_after_commit":
      notes.push(afterCheckpointNote(checkpoint.error));
      return {
        outcome: { kind: "failed_after_checkpoint" },
        notes,
        checkpoint: checkpoint.result,
        failedAfterCheckpoint: checkpoint.error,
        // The context was compacted for the overflow; only the automatic retry is off.
        ...(overflow ? { overflowRecovered: true } : {}),
      };
  }
}

/** What a threshold checkpoint did: the prune rung says so (no model call), a summary is "compacted". */
function committedNote(result: CompactionResult): string {
  if (result.rung !== "prune" || !result.pruned) return "compacted";
  const { outputs, tokensSaved } = result.pruned;
  return `pruned ${outputs} old tool output${outputs === 1 ? "" : "s"} (${tokensSaved} tokens), no model call`;
}
