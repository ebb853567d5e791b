/**
 * Which entries are messages, and the message each one stands for (docs/design.md#data-model,
 * #what-a-context-holds).
 * Kept in one place so that context building, usage, compaction and branch summaries agree on
 * what "context-visible" means.
 */
import type { ContextMessage, SessionEntry } from "@base-context/protocol";

/** Entries that never produce a message: they only carry state (model, labels, plugin data…). */
export function isMetadataEntry(entry: SessionEntry): boolean {
  switch (entry.type) {
    case "model_change":
    case "thinking_level_change":
    case "label":
    case "session_info":
    case "custom":
      return true;
    default:
      return false;
  }
}

/** Entry timestamps are ISO strings, message timestamps are ms numbers (pi's convention). */
export function entryTimestampMs(entry: SessionEntry): number | undefined {
  const ms = Date.parse(entry.timestamp);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * The message an entry contributes to the context, or undefined when it contributes nothing.
 * Compaction entries are not messages here: the context builder places the latest compaction's
 * summary itself; use `compactionSummaryMessage` where an older compaction must be read as text
 * (branch summaries).
 */
export function entryToContextMessage(entry: SessionEntry): ContextMessage | undefined {
  switch (entry.type) {
    case "message": {
      const message = entry.message;
      // `!!cmd` in pi: the command ran, but its output was meant for the user only.
      if (message.role === "bashExecution" && message.excludeFromContext === true) return undefined;
      return message;
    }
    case "custom_message": {
      const timestamp = entryTimestampMs(entry);
      return {
        role: "custom",
        customType: entry.customType,
        content: entry.content,
        display: entry.display,
        ...(entry.details !== undefined ? { details: entry.details } : {}),
        ...(timestamp !== undefined ? { timestamp } : {}),
      };
    }
    case "branch_summary": {
      // An empty summary carries nothing for the model (pi skips it too).
      if (!entry.summary) return undefined;
      const timestamp = entryTimestampMs(entry);
      return {
        role: "branchSummary",
        summary: entry.summary,
        fromId: entry.fromId,
        ...(timestamp !== undefined ? { timestamp } : {}),
      };
    }
    default:
      return undefined;
  }
}

/** A compaction entry read as its summary message. */
export function compactionSummaryMessage(entry: Extract<SessionEntry, { type: "compaction" }>): ContextMessage {
  const timestamp = entryTimestampMs(entry);
  return {
    role: "compactionSummary",
    summary: entry.summary,
    tokensBefore: entry.tokensBefore,
    ...(timestamp !== undefined ? { timestamp } : {}),
  };
}

/** Whether an entry produces a message in the context (the latest compaction aside). */
export function isContextVisible(entry: SessionEntry): boolean {
  return entryToContextMessage(entry) !== undefined;
}
