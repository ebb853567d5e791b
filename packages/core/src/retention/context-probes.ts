/**
 * The probes of a whole context: what a summary written by another agent of everything its model
 * saw must keep. Claude Code summarizes its whole context at once (its previous summary and all
 * that followed), so the range a compaction of its replaces is the context as it stood just
 * before it: the path up to the compaction, built as a context, read with the precise probes,
 * with what the previous summary carried (docs/retention.md, "Claude Code's compactions").
 */
import type { SessionEntry } from "@base-context/protocol";
import { buildContext } from "../context.js";
import { probeMessages, mergeProbes, type RetentionProbes } from "./probes.js";
import { carriedProbes } from "./repair.js";

/** `path`: root → the last entry the context holds (the entry a compaction hangs under, or the leaf). */
export function contextProbes(path: readonly SessionEntry[]): RetentionProbes {
  const built = buildContext({ path: path.map((entry) => ({ entry, tokens: 0 })) });
  const previous = built.compactionId !== undefined ? path.find((entry) => entry.id === built.compactionId) : undefined;
  const previousSummary = previous?.type === "compaction" ? previous.summary : undefined;
  // The previous summary is not read as a message: what it carries is checked as carried items.
  const messages = previousSummary !== undefined ? built.messages.slice(1) : built.messages;
  return mergeProbes(carriedProbes(previousSummary), probeMessages(messages));
}
