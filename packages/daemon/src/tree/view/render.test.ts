import { describe, expect, it } from "vitest";
import { assistant, toolResult, treeFixture, user } from "../test-support.js";
import { renderTree, type FlatNode } from "./render.js";

/**
 * A session a user would look at: a fix, a long linear stretch, a compaction, an abandoned
 * branch left with a labelled summary, a labelled entry, and the current branch.
 */
async function exploredSession(): Promise<FlatNode[]> {
  const f = await treeFixture();
  try {
    await f.append(user("Fix the login bug in src/auth.ts"));
    await f.append(assistant("Let me read it first.", [{ name: "read", path: "src/auth.ts" }]));
    await f.append(toolResult("read-0", "read", "export function login(user, password) {\n  return user.password == password;\n}"));
    const fixed = await f.append(
      assistant("Fixed: the comparison now uses a constant-time check.", [{ name: "edit", path: "src/auth.ts" }]),
    );
    let last = fixed;
    for (let step = 1; step <= 6; step++) {
      await f.append(user(`Step ${step}: tighten the tests`));
      last = await f.append(assistant(`Done with step ${step}.`));
    }
    await f.append({
      type: "compaction",
      summary: "## Goal\nFix the login bug and harden the tests.\n\n## Progress\n- [x] comparison fixed",
      firstKeptEntryId: last.id,
      tokensBefore: 5400,
    });
    const redis = await f.append(user("Now try redis for the session store"));
    await f.append(assistant("Added a redis store.", [{ name: "write", path: "src/session-store.ts" }]));
    await f.tree.navigate({ sessionId: f.sessionId, targetId: redis.id, summarize: true, label: "redis attempt" });
    await f.append(user("Use an in-memory store instead, with a TTL"));
    await f.append({ type: "model_change", provider: "openai", modelId: "gpt-4.1-mini" });
    await f.append(assistant("", [{ name: "bash", path: "npm test" }]));
    await f.sessions.setLabel({ sessionId: f.sessionId, targetId: fixed.id, label: "auth fixed" });
    return (await f.sessions.tree({ sessionId: f.sessionId, flat: true })).nodes!;
  } finally {
    await f.close();
  }
}

describe("renderTree", () => {
  it("draws branches with box lines, marks the leaf, labels, compactions and branch summaries, folds long stretches", async () => {
    expect(renderTree(await exploredSession(), { width: 110 })).toMatchInlineSnapshot(`
      "e0000001 user: Fix the login bug in src/auth.ts
      e0000002 assistant: Let me read it first. → read src/auth.ts
      e0000003 tool result: read: export function login(user, password) { return user.password == password; }
      e0000004 assistant: Fixed: the comparison now uses a constant-time check. → edit src/aut…  [label: auth fixed]
      e0000005 user: Step 1: tighten the tests
      e0000006 assistant: Done with step 1.
      … 8 more entries …
      e000000f user: Step 6: tighten the tests
      e0000010 assistant: Done with step 6.
      e0000011 [compaction] Fix the login bug and harden the tests.  (replaced 15 entries)
      ├─ e0000012 user: Now try redis for the session store
      │  e0000013 assistant: Added a redis store. → write src/session-store.ts
      └─ e0000014 [branch summary] Explored the branch (1 messages)  (replaced 2 entries) [label: redis attempt]
         e0000015 label: e0000014 = "redis attempt"
         e0000016 user: Use an in-memory store instead, with a TTL
         e0000017 model: openai/gpt-4.1-mini
         e0000018 assistant: → bash npm test
         e0000019 label: e0000004 = "auth fixed"  ← current leaf
      "
    `);
  });

  it("shows every entry with all: true", async () => {
    const nodes = await exploredSession();
    const lines = renderTree(nodes, { all: true }).trimEnd().split("\n");
    expect(lines).toHaveLength(nodes.length);
    expect(lines.join("\n")).not.toContain("more entries");
  });

  it("colours only when asked", async () => {
    const nodes = await exploredSession();
    expect(renderTree(nodes)).not.toContain("\x1b[");
    const coloured = renderTree(nodes, { color: true });
    expect(coloured).toContain("\x1b[32m\x1b[1m← current leaf");
    expect(coloured.replace(/\x1b\[[0-9;]*m/g, "")).toBe(renderTree(nodes));
  });

  it("cuts every line to the width, whatever makes it long: the preview, the indentation, the tags", () => {
    const nodes: FlatNode[] = [node("a", null, "word ".repeat(100))];
    const [line] = renderTree(nodes, { width: 40 }).split("\n");
    expect(line).toBe("a user: word word word word word word w…");
    expect(Array.from(line!).length).toBe(40);
    const [narrow] = renderTree(nodes, { width: 5 }).split("\n");
    expect(narrow).toBe("a us…");

    // A 46,000-character file read deep in nested branches, labelled, the current leaf.
    const deep: FlatNode[] = [node("r", null, "root")];
    for (let level = 0; level < 30; level++) {
      deep.push(node(`x${level}`, level === 0 ? "r" : `b${level - 1}`, "side"));
      deep.push(node(`b${level}`, level === 0 ? "r" : `b${level - 1}`, "main"));
    }
    deep.push({ ...node("big", "b29", "x".repeat(46_000)), label: "a long label ".repeat(20), isLeaf: true });
    for (const color of [false, true]) {
      for (const width of [20, 60, 120]) {
        for (const text of renderTree(deep, { width, color }).trimEnd().split("\n")) {
          expect(Array.from(text.replace(/\x1b\[[0-9;]*m/g, "")).length).toBeLessThanOrEqual(width);
        }
      }
    }
  });

  it("draws several roots as branches, orphans as roots, and an empty session", () => {
    expect(renderTree([node("r1", null, "first"), node("r2", null, "second"), node("x", "missing", "orphan")])).toBe(
      "├─ r1 user: first\n├─ r2 user: second\n└─ x user: orphan\n",
    );
    expect(renderTree([])).toBe("(empty session)\n");
  });

  it("renders a 20,000-entry chain with nested branches without recursing", () => {
    const nodes: FlatNode[] = [];
    for (let i = 0; i < 20_000; i++) nodes.push(node(`n${i}`, i === 0 ? null : `n${i - 1}`, `message ${i}`));
    nodes.push(node("side", "n10", "a side branch"));
    nodes[nodes.length - 2]!.isLeaf = true;
    const text = renderTree(nodes);
    expect(text.split("\n").length).toBeLessThan(20);
    expect(text).toContain("├─ n11 user: message 11\n│  n12 user: message 12\n│  n13 user: message 13\n│  … 19983 more entries …\n");
    expect(text).toContain("└─ side user: a side branch");
    expect(text).toContain("n19999 user: message 19999  ← current leaf");
  });
});

function node(id: string, parentId: string | null, text: string): FlatNode {
  return { entry: { type: "message", id, parentId, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: text } } };
}
