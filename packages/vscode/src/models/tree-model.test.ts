import type { SessionEntry } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import type { ViewItem } from "./view-item.js";
import { treeView, type FlatNode } from "./tree-model.js";
import { report } from "./test-support.js";

let clock = Date.parse("2026-03-01T10:00:00.000Z");
const at = () => new Date((clock += 1000)).toISOString();

function user(id: string, parentId: string | null, text: string): SessionEntry {
  return { type: "message", id, parentId, timestamp: at(), message: { role: "user", content: text } };
}
function assistant(id: string, parentId: string | null, text: string): SessionEntry {
  return { type: "message", id, parentId, timestamp: at(), message: { role: "assistant", content: [{ type: "text", text }] } } as SessionEntry;
}
const retention = report({ files: [2, 3], errors: [1, 1], requests: [1, 1] }, { files: ["src/lost.ts"] });

/**
 *   u1 a1 u2 a2 c1(compaction keeping from u2) u3 a3*        (branch 1, holds the leaf)
 *                        └─ b1(branch summary of a1's other branch) …
 *   a1 also has a second child u4 (branch 2) → a4
 */
function sample(): FlatNode[] {
  const entries: SessionEntry[] = [
    user("u1", null, "Fix the login bug"),
    assistant("a1", "u1", "Looking at src/auth.ts"),
    user("u2", "a1", "Now   add\n a test"),
    assistant("a2", "u2", "Added the test."),
    { type: "compaction", id: "c1", parentId: "a2", timestamp: at(), summary: "## Goal\nFix the login bug\n", firstKeptEntryId: "u2", tokensBefore: 9000, details: { retention } },
    user("u3", "c1", "Ship it"),
    assistant("a3", "u3", "Shipped."),
    user("u4", "a1", "Try redis instead"),
    assistant("a4", "u4", "Redis store added."),
    { type: "branch_summary", id: "b1", parentId: "a4", timestamp: at(), summary: "## Goal\nRedis was dropped\n", fromId: "a4", details: { source: "claude-code", retention } },
  ] as SessionEntry[];
  return entries.map((entry) => ({ entry, ...(entry.id === "a3" ? { isLeaf: true } : {}), ...(entry.id === "u2" ? { label: "test added" } : {}) }));
}

const labels = (items: readonly ViewItem[]) => items.map((item) => item.label);

describe("treeView", () => {
  const rows = treeView({ sessionId: "s1", nodes: sample() });

  it("keeps a stretch without branches at one level and gives each branch a row of its own, the leaf's open", () => {
    expect(labels(rows)).toEqual(["Fix the login bug", "Looking at src/auth.ts", "Branch 1/2: Now add a test", "Branch 2/2: Try redis instead"]);
    const [, , first, second] = rows;
    expect(first).toMatchObject({ collapsible: "expanded", description: "5 entries · ● current branch", icon: { id: "git-branch", color: "charts.green" } });
    expect(second).toMatchObject({ collapsible: "collapsed", description: "3 entries" });
    expect(labels(first!.children!)).toEqual(["Now add a test", "Added the test.", "Fix the login bug", "Ship it", "Shipped."]);
    expect(first!.accessibilityLabel).toBe("branch 1 of 2, 5 entries · ● current branch: Now add a test");
  });

  it("marks the current leaf and labels, and gives each row a stable id in the session", () => {
    const branch = rows[2]!.children!;
    const leaf = branch[4]!;
    expect(leaf).toMatchObject({ id: "s1/a3", contextValue: "entry.leaf", icon: { id: "debug-stackframe", color: "charts.green" } });
    expect(leaf.description).toBe("● current leaf · assistant");
    expect(branch[0]!.description).toBe("🏷 test added · user");
    expect(branch[0]!.contextValue).toBe("entry");
  });

  it("says what a compaction replaced and what its summary kept, and flags what it lost", () => {
    const compaction = rows[2]!.children![2]!;
    expect(compaction.description).toBe("compaction · replaced 2 entries · kept 2/3 files, 1/1 errors, 1/1 requests");
    expect(compaction.icon).toEqual({ id: "fold", color: "charts.yellow" });
    expect(compaction.tooltip).toContain("- files: src/lost\\.ts");
    expect(compaction.tooltip).toContain("## Goal");
    expect(compaction.accessibilityLabel).toBe("compaction c1: Fix the login bug. replaced 2 entries, kept 2/3 files, 1/1 errors, 1/1 requests");
  });

  it("names another agent's summary in its retention line", () => {
    const summary = rows[3]!.children![2]!;
    expect(summary.label).toBe("Redis was dropped");
    expect(summary.description).toMatch(/^branch summary · replaced \d+ entr(y|ies) · Claude Code's summary kept 2\/3 files/);
  });

  it("filters to summaries (and the leaf), keeping the branches they are on", () => {
    const filtered = treeView({ sessionId: "s1", nodes: sample(), filter: "summaries" });
    expect(labels(filtered)).toEqual(["Branch 1/2: Fix the login bug", "Branch 2/2: Redis was dropped"]);
    expect(labels(filtered[0]!.children!)).toEqual(["Fix the login bug", "Shipped."]);
    // What the compaction replaced is counted on the whole tree, not the filtered one.
    expect(filtered[0]!.children![0]!.description).toContain("replaced 2 entries");
  });

  it("shows several roots (entries whose parent is missing) as branches, and an empty session as no rows", () => {
    const orphans = [
      { entry: user("x1", null, "first root") },
      { entry: user("x2", "gone", "second root"), isLeaf: true },
    ];
    expect(labels(treeView({ sessionId: "s", nodes: orphans }))).toEqual(["Branch 1/2: first root", "Branch 2/2: second root"]);
    expect(treeView({ sessionId: "s", nodes: [] })).toEqual([]);
  });

  it("draws a long linear session without nesting or recursion", () => {
    const long: FlatNode[] = Array.from({ length: 5_000 }, (_, i) => ({ entry: user(`e${i}`, i === 0 ? null : `e${i - 1}`, `message ${i}`) }));
    const items = treeView({ sessionId: "s", nodes: long });
    expect(items).toHaveLength(5_000);
    expect(items[4_999]!.label).toBe("message 4999");
  });
});
