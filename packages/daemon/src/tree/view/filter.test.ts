import type { SessionEntry } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { filterTree } from "./filter.js";
import { layoutTree, type FlatNode } from "./layout.js";
import { summaryGoal } from "./preview.js";
import { replacedCounts } from "./replaced.js";
import { renderTree } from "./render.js";

const at = "2026-01-01T00:00:00.000Z";
const user = (id: string, parentId: string | null, text: string): FlatNode => ({
  entry: { type: "message", id, parentId, timestamp: at, message: { role: "user", content: text } },
});
const answer = (id: string, parentId: string, text: string): FlatNode => ({
  entry: {
    type: "message",
    id,
    parentId,
    timestamp: at,
    message: { role: "assistant", content: [{ type: "text", text }] },
  } as SessionEntry,
});

/** u1 → a1 → u2 → a2 (labelled) → c (compaction keeping u3's branch) … and a side branch under a1. */
function nodes(): FlatNode[] {
  return [
    user("u1", null, "first"),
    answer("a1", "u1", "one"),
    user("u2", "a1", "second"),
    { ...answer("a2", "u2", "two"), label: "checkpoint" },
    user("u3", "a2", "third"),
    answer("a3", "u3", "three"),
    {
      entry: {
        type: "compaction",
        id: "c1",
        parentId: "a3",
        timestamp: at,
        summary: "/mode\n\n## Goal\nShip the login fix.\n\n## Progress\n- done",
        firstKeptEntryId: "u3",
        tokensBefore: 100,
      },
    },
    { ...answer("a4", "c1", "four"), isLeaf: true },
    user("s1", "a1", "side question"),
    {
      entry: {
        type: "branch_summary",
        id: "b1",
        parentId: "s1",
        timestamp: at,
        summary: "## Goal\n(none)\n\nTried the side idea.",
        fromId: "a4",
      },
    },
  ];
}

describe("filterTree", () => {
  it("keeps user messages (and the current leaf) under their nearest kept ancestor", () => {
    const kept = filterTree(nodes(), { filter: "user" });
    expect(kept.map((node) => [node.entry.id, node.entry.parentId])).toEqual([
      ["u1", null],
      ["u2", "u1"],
      ["u3", "u2"],
      ["a4", "u3"],
      ["s1", "u1"],
    ]);
  });

  it("keeps labelled entries, summaries, or the neighbourhood of an entry", () => {
    expect(filterTree(nodes(), { filter: "labelled" }).map((node) => node.entry.id)).toEqual(["a2", "a4"]);
    expect(filterTree(nodes(), { filter: "summaries" }).map((node) => node.entry.id)).toEqual(["c1", "a4", "b1"]);
    expect(filterTree(nodes(), { around: { id: "a1", context: 1 } }).map((node) => node.entry.id)).toEqual(["u1", "a1", "u2", "s1"]);
    expect(filterTree(nodes(), { around: { id: "a1", context: 1 }, filter: "user" }).map((node) => node.entry.id)).toEqual([
      "u1",
      "a1",
      "u2",
      "s1",
    ]);
  });
});

describe("prune entries count as summaries", () => {
  const prune = (id: string, parentId: string): FlatNode => ({
    entry: {
      type: "prune",
      id,
      parentId,
      timestamp: at,
      hidden: [{ entryId: "u1", toolName: "read", args: "a.ts", tokens: 900, stubTokens: 10 }],
      tokensSaved: 890,
    } as SessionEntry,
  });

  it("the summaries filter keeps a prune", () => {
    const withPrune = [
      ...nodes().slice(0, 3),
      prune("p1", "u2"),
      ...nodes()
        .slice(3)
        .map((node) => (node.entry.id === "a2" ? { ...node, entry: { ...node.entry, parentId: "p1" } } : node)),
    ];
    expect(filterTree(withPrune, { filter: "summaries" }).map((node) => node.entry.id)).toEqual(["p1", "c1", "a4", "b1"]);
  });

  it("folding a long stretch never hides a prune", () => {
    const chain: FlatNode[] = [user("m0", null, "start")];
    for (let index = 1; index < 20; index++)
      chain.push(index === 10 ? prune("m10", "m9") : user(`m${index}`, `m${index - 1}`, `step ${index}`));
    chain[chain.length - 1] = { ...chain[chain.length - 1]!, isLeaf: true };
    const shown = layoutTree(chain, {}).flatMap((row) => (row.kind === "node" ? [row.node.entry.id] : []));
    expect(shown).toContain("m10");
    expect(shown.length).toBeLessThan(chain.length);
  });
});

describe("summary labels", () => {
  it("say what the summary is about (its goal) and how many entries it replaced", () => {
    expect(summaryGoal("/mode\n\n## Goal\nShip the login fix.\n\n## Progress\n- done")).toBe("Ship the login fix.");
    expect(summaryGoal("## Goal\n(none)\n\nTried the side idea.")).toBe("Tried the side idea.");
    expect(summaryGoal("Plain text summary")).toBe("Plain text summary");
    expect(replacedCounts(nodes())).toEqual(new Map([["c1", 4], ["b1", 6]]));
    const text = renderTree(nodes(), { all: true });
    expect(text).toContain("c1 [compaction] Ship the login fix.  (replaced 4 entries)");
    expect(text).toContain("b1 [branch summary] Tried the side idea.  (replaced 6 entries)");
    expect(text).not.toContain("/mode");
  });

  it("a depth limit sums up deeper branches in one line", () => {
    const text = renderTree(nodes(), { all: true, maxBranchDepth: 0 });
    expect(text).toContain("… 8 entries in 2 deeper branches (raise --depth) …");
    expect(text).not.toContain("u2");
  });
});
