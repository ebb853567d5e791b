import { describe, expect, it } from "vitest";
import { decideFollowUp, type FollowUp, type FollowUpInput, type TurnOutcome } from "./turn-end-follow-up.js";

const completed: TurnOutcome = { kind: "completed", checkpoint: false };
const checkpointed: TurnOutcome = { kind: "completed", checkpoint: true };
const batch = (...terminate: boolean[]) => ({ results: terminate.map((t) => ({ terminate: t })) });

/** [what, input, expected follow-up] */
const TABLE: readonly (readonly [string, FollowUpInput, FollowUp])[] = [
  ["a plain reply without tools", { outcome: completed }, "none"],
  ["a threshold checkpoint alone", { outcome: checkpointed }, "none"],
  ["a threshold checkpoint with an empty batch", { outcome: checkpointed, toolBatch: batch() }, "none"],
  ["a tool batch that did not request termination", { outcome: completed, toolBatch: batch(false) }, "continue"],
  ["the same batch after a threshold checkpoint", { outcome: checkpointed, toolBatch: batch(false) }, "continue"],
  ["a batch where only some results requested termination", { outcome: checkpointed, toolBatch: batch(true, false) }, "continue"],
  ["a batch where every result requested termination", { outcome: completed, toolBatch: batch(true, true) }, "none"],
  ["the same after a threshold checkpoint", { outcome: checkpointed, toolBatch: batch(true) }, "none"],
  ["queued inputs after a threshold checkpoint", { outcome: checkpointed, queuedInputs: 2 }, "continue"],
  ["queued inputs after a terminating batch", { outcome: completed, toolBatch: batch(true), queuedInputs: 1 }, "continue"],
  ["zero queued inputs", { outcome: checkpointed, queuedInputs: 0 }, "none"],
  [
    "an aborted turn with a live batch and queued inputs",
    { outcome: { kind: "aborted" }, toolBatch: batch(false), queuedInputs: 3 },
    "none",
  ],
  ["an overflow recovered by compaction", { outcome: { kind: "overflow_recovered" } }, "retry"],
  ["an overflow recovered, with queued inputs", { outcome: { kind: "overflow_recovered" }, queuedInputs: 1 }, "retry"],
  ["an overflow that could not be recovered", { outcome: { kind: "overflow_unrecovered" }, queuedInputs: 1 }, "none"],
  [
    "a checkpoint that committed before a later failure",
    { outcome: { kind: "failed_after_checkpoint" }, toolBatch: batch(false), queuedInputs: 1 },
    "none",
  ],
];

describe("decideFollowUp", () => {
  it.each(TABLE)("%s", (_what, input, expected) => {
    expect(decideFollowUp(input)).toBe(expected);
  });
});
