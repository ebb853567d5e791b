/**
 * The SDK's `applyHistoryTransaction`: atomic, idempotent by `operationId`, a replaced suffix
 * checked first. The transaction records its `operationId` in a `custom` entry appended in the same
 * `entry/appendMany` as its items: the record and the change are one write.
 */
import { createHash } from "node:crypto";
import type { SessionHistoryTransactionArgs } from "@openai/agents";
import { SessionPath, SessionTree, type EntryInput } from "@base-context/protocol";
import { BaseContextError } from "./errors.js";
import { historyView } from "./history.js";
import type { DaemonLink } from "./link.js";
import { rewriteFrom } from "./rewrite.js";

export const TRANSACTION_TYPE = "openai-agents.transaction";

/** Key-order-independent equality of JSON-like values (what the SDK's snapshots compare). */
export function structurallyEqual(left: unknown, right: unknown): boolean {
  return canonical(left) === canonical(right);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.entries(inner as Record<string, unknown>)
            .filter(([, v]) => v !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : inner,
  );
}

export async function applyTransaction(link: DaemonLink, sessionId: string, args: SessionHistoryTransactionArgs): Promise<void> {
  const operationId = (args as { operationId?: unknown } | undefined)?.operationId;
  const transaction = (args as { transaction?: { type?: unknown } } | undefined)?.transaction;
  if (typeof operationId !== "string" || !operationId.trim()) {
    throw new BaseContextError("invalid_items", "Session history transaction operationId must be a non-empty string.");
  }
  if (!transaction || (transaction.type !== "append_items" && transaction.type !== "replace_suffix")) {
    throw new BaseContextError("invalid_items", "Unsupported session history transaction type.");
  }
  let digest: string;
  try {
    digest = createHash("sha256").update(canonical(structuredClone(transaction))).digest("hex");
  } catch (error) {
    throw new BaseContextError("invalid_items", "Session history transaction items contain invalid or unsupported data.", { cause: error });
  }
  const { nodes = [] } = await link.request(SessionTree, { sessionId, flat: true });
  for (const { entry } of nodes) {
    if (entry.type !== "custom" || entry.customType !== TRANSACTION_TYPE) continue;
    const data = entry.data as { operationId?: string; digest?: string } | undefined;
    if (data?.operationId !== operationId) continue;
    if (data.digest === digest) return;
    throw new BaseContextError("history_conflict", "Session history operation was already applied with a different transaction.");
  }
  const marker = { type: "custom", customType: TRANSACTION_TYPE, data: { operationId, digest } } as EntryInput;
  const { entries } = await link.request(SessionPath, { sessionId });
  const view = historyView(entries);
  if (args.transaction.type === "append_items") {
    await rewriteFrom(link, sessionId, view, view.items.length, args.transaction.items, { marker });
    return;
  }
  const { expectedSuffix, replacement } = args.transaction;
  const start = view.items.length - expectedSuffix.length;
  const actual = view.items.slice(Math.max(0, start)).map((item) => item.item);
  if (start < 0 || !structurallyEqual(actual, expectedSuffix)) {
    throw new BaseContextError("history_conflict", "Session history suffix no longer matches the transaction precondition.");
  }
  await rewriteFrom(link, sessionId, view, start, replacement, { marker });
}
