/**
 * Whether the client should go on by itself after a turn (docs/design.md#follow-up).
 * The answer comes from what the turn produced — the finalized tool batch, the inputs
 * the client already accepted, how the turn ended — never from the last message's role: a
 * checkpoint is not a reason to continue, and a committed checkpoint is not a reason to stop work
 * that was going on anyway.
 */
import type { ToolBatch } from "@base-context/protocol";
import type { z } from "zod";

export type FollowUp = "none" | "continue" | "retry";

/** How the turn ended, as far as the follow-up is concerned. */
export type TurnOutcome =
  /** The reply came back (with or without a threshold checkpoint after it), or failed for another reason. */
  | { readonly kind: "completed"; readonly checkpoint: boolean }
  /** The user stopped the turn: it never resumes by itself. */
  | { readonly kind: "aborted" }
  /** The context overflowed and an overflow compaction committed: the same request can be sent again. */
  | { readonly kind: "overflow_recovered" }
  /** The context overflowed and could not be recovered (second overflow, compaction off or impossible). */
  | { readonly kind: "overflow_unrecovered" }
  /** A checkpoint committed and a later step failed: the checkpoint stands, nothing resumes by itself. */
  | { readonly kind: "failed_after_checkpoint" };

export interface FollowUpInput {
  readonly outcome: TurnOutcome;
  /** The finalized tool batch of the turn; absent when the reply called no tools. */
  readonly toolBatch?: z.infer<typeof ToolBatch> | undefined;
  /** Inputs the client accepted while the turn ran and has not sent yet. */
  readonly queuedInputs?: number | undefined;
}

export function decideFollowUp({ outcome, toolBatch, queuedInputs = 0 }: FollowUpInput): FollowUp {
  switch (outcome.kind) {
    case "aborted":
    case "overflow_unrecovered":
    case "failed_after_checkpoint":
      return "none";
    case "overflow_recovered":
      return "retry";
    case "completed":
      // Queued inputs own more work: the client sends them first, then the loop goes on.
      if (queuedInputs > 0) return "continue";
      // The batch asks to continue as it would have without a checkpoint, unless every result
      // requested termination (an empty batch included: nothing is left to answer).
      return toolBatch?.results.some((result) => !result.terminate) ? "continue" : "none";
  }
}
