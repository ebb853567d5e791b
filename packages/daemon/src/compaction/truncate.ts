/**
 * The first step of a run that knows the window: tool outputs larger than their share of it are cut
 * (core's planTruncation, docs/compaction-rungs.md#outputs-larger-than-the-window) by a prune entry
 * of their own, so the run then decides on the context as the model will see it; and what the run
 * says about it and about settings that cannot fit the window.
 */
import { planTruncation, pruneEntryInput, type TruncationLimits } from "@base-context/core";
import type { CompactionResult } from "@base-context/protocol";
import type { SessionService } from "../sessions/index.js";

/** Cuts the outputs under the leaf; what it wrote, undefined when nothing was. */
export async function truncate(
  sessions: SessionService,
  sessionId: string,
  limits: TruncationLimits,
  /** Throws when the run was cancelled meanwhile: nothing is written then. */
  checkCancelled: () => void,
): Promise<CompactionResult["truncated"]> {
  const path = await sessions.getContextPath(sessionId);
  checkCancelled();
  const plan = planTruncation(path.entries, limits);
  const leaf = path.entries[path.entries.length - 1];
  if (plan.hidden.length === 0 || !leaf) return undefined;
  const outcome = await sessions.appendEntries({
    sessionId,
    entries: [pruneEntryInput(plan)],
    onlyIfOnPath: leaf.entry.id,
  });
  if (outcome.status === "stale") return undefined;
  return { entryId: outcome.entries[0]!.entry.id, outputs: plan.hidden.length, tokensSaved: plan.tokensSaved };
}

/** What a run adds to its result's message and fields: the window conflict and the outputs it cut first. */
export class RunNotes {
  constructor(
    private readonly conflict: string | undefined,
    private readonly truncation: CompactionResult["truncated"],
  ) {}

  /** The message with the cut outputs before it and the conflict after it. */
  around(message: string | undefined): string {
    const parts: string[] = [];
    if (this.truncation) {
      const { outputs, tokensSaved } = this.truncation;
      parts.push(`cut ${outputs} tool output${outputs === 1 ? "" : "s"} to fit the window (${tokensSaved.toLocaleString("en-US")} tokens)`);
    }
    if (message) parts.push(message);
    if (this.conflict) parts.push(this.conflict);
    return parts.join("; ");
  }

  truncated(): Pick<CompactionResult, "truncated"> {
    return this.truncation ? { truncated: this.truncation } : {};
  }

  into(result: CompactionResult): CompactionResult {
    return { ...result, message: this.around(result.message), ...this.truncated() };
  }
}
