/**
 * `requestId` idempotency for tree/navigate: a retry returns the first result instead of
 * navigating (and summarizing) again. A navigation that appended entries stores its result with
 * the append, in the same transaction (`AppendRequest.request.extra`); one that wrote nothing or
 * only moved the leaf stores it on its own (`SessionRecords.saveRequestResult`).
 */
import { TreeNavigate, type ResultOf } from "@base-context/protocol";
import { z } from "zod";
import type { SessionRecords } from "../sessions/index.js";

export type NavigateResult = ResultOf<typeof TreeNavigate>;

export const NAVIGATE_METHOD = TreeNavigate.method;

/** What is stored for a navigation: the reply, with the summary entry by id (the store has it). */
const StoredNavigation = z.object({
  navigate: TreeNavigate.result.omit({ summaryEntry: true }),
  summaryEntryId: z.string().optional(),
});
export type StoredNavigation = z.infer<typeof StoredNavigation>;

/** The first result of `requestId` on this session, or undefined when it was not used yet. */
export function findNavigation(records: SessionRecords, sessionId: string, requestId: string): NavigateResult | undefined {
  const found = records.findRequestResult(sessionId, requestId, NAVIGATE_METHOD);
  if (!found) return undefined;
  // An append keeps the caller's `extra` beside its own record ({ entryIds, leafId, extra }).
  const raw = isRecord(found.result) && "extra" in found.result ? found.result.extra : found.result;
  const stored = StoredNavigation.parse(raw);
  const result: NavigateResult = { ...stored.navigate };
  if (stored.summaryEntryId !== undefined) {
    const entry = records.getEntry(sessionId, stored.summaryEntryId);
    if (entry) result.summaryEntry = entry.entry;
  }
  return result;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
