import type { AgentInputItem } from "@openai/agents";
import type { CompactionEntry, EntryInput, PruneEntry, SessionEntry } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { historyView } from "./history.js";
import { groupToEntry } from "./items.js";
import { KEPT_NOTHING_TYPE, planRewrite } from "./rewrite.js";

/** A path of entries made from SDK items, chained, with the ids given. */
function chain(...parts: [id: string, body: EntryInput | Omit<SessionEntry, "id" | "parentId" | "timestamp">][]): SessionEntry[] {
  const path: SessionEntry[] = [];
  for (const [id, body] of parts) {
    path.push({ ...body, id, parentId: path.at(-1)?.id ?? null, timestamp: "2026-01-01T00:00:00.000Z" } as SessionEntry);
  }
  return path;
}

const user = (text: string) => groupToEntry([{ role: "user", content: text } as AgentInputItem]);
const answer = (text: string) =>
  groupToEntry([{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] } as AgentInputItem]);
const call = (callId: string) => groupToEntry([{ type: "function_call", callId, name: "read", arguments: "{}" } as AgentInputItem]);
const output = (callId: string) =>
  groupToEntry([{ type: "function_call_result", callId, name: "read", status: "completed", output: "contents" } as AgentInputItem]);
const compaction = (firstKeptEntryId: string): Omit<CompactionEntry, "id" | "parentId" | "timestamp"> => ({
  type: "compaction",
  summary: "earlier work",
  firstKeptEntryId,
  tokensBefore: 100,
});
const prune = (entryId: string): Omit<PruneEntry, "id" | "parentId" | "timestamp"> => ({
  type: "prune",
  hidden: [{ entryId, toolName: "read", args: "", tokens: 500, stubTokens: 20 }],
  tokensSaved: 480,
});

/** u1 a1 | u2 c2 o2 P(o2) C(kept from u2) u3 a3: the view is [summary, u2, c2, o2 (stub), u3, a3]. */
const PATH = chain(
  ["u1", user("one")],
  ["a1", answer("done one")],
  ["u2", user("two")],
  ["c2", call("k2")],
  ["o2", output("k2")],
  ["p2", prune("o2")],
  ["cc", compaction("u2")],
  ["u3", user("three")],
  ["a3", answer("done three")],
);
const view = historyView(PATH);
const at = (entryId: string) => view.items.findIndex((item) => item.entry.id === entryId);

describe("planRewrite", () => {
  it("sees the summary, the kept items and what follows", () => {
    expect(view.items.map((item) => item.entry.id)).toEqual(["cc", "u2", "c2", "o2", "u3", "a3"]);
  });

  it("pops an item after the compaction by moving the leaf back only", () => {
    expect(planRewrite(view, at("a3"), [])).toEqual({ branchTo: "u3", entries: [] });
    expect(planRewrite(view, at("u3"), [])).toEqual({ branchTo: "cc", entries: [] });
  });

  it("writes the compaction again after what stays of its kept items, its first kept entry unchanged", () => {
    const plan = planRewrite(view, at("o2"), []);
    expect(plan.branchTo).toBe("c2");
    expect(plan.entries).toEqual([expect.objectContaining({ type: "compaction", summary: "earlier work", firstKeptEntryId: "u2" })]);
  });

  it("past the compaction's first kept entry leaves the compaction behind: the path as it is", () => {
    expect(planRewrite(view, at("u2"), [])).toEqual({ branchTo: "a1", entries: [] });
  });

  it("from the summary keeps nothing of the history", () => {
    const replacement = [{ role: "user", content: "fresh" } as AgentInputItem];
    expect(planRewrite(view, 0, replacement)).toEqual({ branchTo: null, entries: [expect.objectContaining({ type: "message" })] });
  });

  it("writes the prune decisions made after the point moved to again, for the outputs that stay", () => {
    // u1 c1 o1 a1 P(o1) u2 a2: popping a1 moves the leaf before P, which hid o1 (still on the path).
    const path = chain(
      ["u1", user("one")],
      ["c1", call("k1")],
      ["o1", output("k1")],
      ["a1", answer("read it")],
      ["p1", prune("o1")],
      ["u2", user("two")],
    );
    const plan = planRewrite(historyView(path), 3, []);
    expect(plan.branchTo).toBe("o1");
    const hidden = [expect.objectContaining({ entryId: "o1" })];
    expect(plan.entries).toEqual([expect.objectContaining({ type: "prune", hidden, tokensSaved: 480 })]);
  });

  it("stores a provider's compaction item in a compaction that keeps nothing, from an anchor of no content", () => {
    const item = { type: "compaction", encrypted_content: "opaque" } as unknown as AgentInputItem;
    const plan = planRewrite(view, 0, [], { providerCompaction: item });
    expect(plan.branchTo).toBe("a3");
    const [anchor, stored] = plan.entries as (EntryInput & { id: string; firstKeptEntryId?: string })[];
    expect(anchor).toMatchObject({ type: "custom", customType: KEPT_NOTHING_TYPE });
    expect(stored).toMatchObject({ type: "compaction", firstKeptEntryId: anchor!.id, details: { agentsItems: [item] } });
  });
});
