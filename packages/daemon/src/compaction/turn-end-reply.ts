/**
 * Which entry is the turn's reply, and which entries start new work: shared by the plan (the
 * reply a client stored itself) and the overflow-recovery rule (new input restores the recovery).
 */
import type { AssistantMessage, SessionEntry } from "@base-context/protocol";
import type { CountedEntry } from "@base-context/core";

/** The reply that ended the turn. */
export interface TurnReply {
  readonly entryId: string;
  readonly message: AssistantMessage;
}

/** The turn's reply among path entries: the latest assistant message not followed by new input. */
export function findTurnReply(path: readonly CountedEntry[]): TurnReply | undefined {
  for (let i = path.length - 1; i >= 0; i--) {
    const { entry } = path[i]!;
    if (entry.type === "message" && entry.message.role === "assistant") return { entryId: entry.id, message: entry.message };
    if (isTurnInput(entry)) return undefined;
  }
  return undefined;
}

/** Entries that start new work: after one of them, an earlier reply is not this turn's. */
export function isTurnInput(entry: SessionEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
  if (entry.type !== "message") return false;
  const { role } = entry.message;
  return role === "user" || role === "custom" || role === "bashExecution";
}
