/**
 * The `session_before_compact` event as a plugin receives it (docs/plugins.md#large-branches).
 * The event crosses the plugin boundary as one message of at most `plugins.maxMessageBytes`, while
 * a branch may hold many entries of up to `limits.maxEntryBytes` each: sent whole, a long branch
 * would fail every plugin as too large. So `branchEntries` is cut to fit: the oldest conversation
 * messages go first (the preparation carries the messages to summarize, and older ones are in
 * the previous summary), then, only if that is not enough, the oldest other entries; the entries a
 * plugin keeps its own state in (custom entries, compactions, labels) stay as long as possible.
 * `branchEntriesOmitted` says how many were left out.
 */
import type { CompactionPreparation, CompactHookEvent, SessionEntry, Settings } from "@base-context/protocol";
import { utf8ByteLength } from "@base-context/core";

/** Room for the call's framing around the event and settings. */
const FRAMING_BYTES = 1024;

export function compactHookEvent(
  preparation: CompactionPreparation,
  branch: readonly SessionEntry[],
  customInstructions: string | undefined,
  settings: Settings,
): CompactHookEvent {
  const base = { preparation, branchEntries: [] as SessionEntry[], ...(customInstructions !== undefined ? { customInstructions } : {}) };
  const budget =
    settings.plugins.maxMessageBytes - FRAMING_BYTES - utf8ByteLength(JSON.stringify(base)) - utf8ByteLength(JSON.stringify(settings)) - 64;
  const { kept, omitted } = fitEntries(branch, budget);
  return omitted > 0 ? { ...base, branchEntries: kept, branchEntriesOmitted: omitted } : { ...base, branchEntries: kept };
}

/** The branch without its oldest messages (then oldest other entries) until its JSON fits in `budget` bytes. */
export function fitEntries(entries: readonly SessionEntry[], budget: number): { kept: SessionEntry[]; omitted: number } {
  const sizes = entries.map((entry) => utf8ByteLength(JSON.stringify(entry)) + 1);
  let total = sizes.reduce((sum, size) => sum + size, 0);
  if (total <= budget) return { kept: [...entries], omitted: 0 };
  const dropped = new Set<number>();
  for (const pass of ["message", "any"] as const) {
    for (let i = 0; i < entries.length && total > budget; i++) {
      if (dropped.has(i) || (pass === "message" && entries[i]!.type !== "message")) continue;
      dropped.add(i);
      total -= sizes[i]!;
    }
  }
  return { kept: entries.filter((_, i) => !dropped.has(i)), omitted: dropped.size };
}
