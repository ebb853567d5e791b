import { describe, expect, it } from "vitest";
import { PathBuilder, toolCall } from "../test-support.js";
import { findCutPoint, isValidCutPoint } from "./cut-point.js";

describe("findCutPoint", () => {
  it("cuts cleanly at the user message where the kept budget is reached", () => {
    const s = new PathBuilder();
    s.exchanges(2, 100); // e1 u, e2 a, e3 u, e4 a
    expect(findCutPoint(s.path, 0, 4, 150)).toEqual({ firstKeptIndex: 2, cutIndex: 2, turnStartIndex: -1, isSplitTurn: false });
  });

  it("counts an entry that reaches the budget exactly", () => {
    const s = new PathBuilder();
    s.exchanges(2, 100);
    expect(findCutPoint(s.path, 0, 4, 200)?.cutIndex).toBe(2);
    expect(findCutPoint(s.path, 0, 4, 201)?.cutIndex).toBe(1);
  });

  it("never cuts at a tool result: moves to the next valid cut point", () => {
    const s = new PathBuilder();
    s.user("go", 10); // 0
    s.assistant({ toolCalls: [toolCall("c1", "bash", {})] }, 10); // 1
    s.toolResult("c1", "big", 500); // 2
    s.assistant({ text: "done" }, 10); // 3
    const cut = findCutPoint(s.path, 0, 4, 400);
    expect(cut?.cutIndex).toBe(3);
    expect(s.path[cut!.cutIndex]!.entry.type).toBe("message");
  });

  it("with keepAtLeastBudget, moves back to the cut point before the tool result: the kept part never holds less than the budget", () => {
    const s = new PathBuilder();
    s.user("go", 10); // 0
    s.assistant({ toolCalls: [toolCall("c1", "bash", {})] }, 10); // 1
    s.toolResult("c1", "big", 500); // 2
    s.assistant({ text: "done" }, 10); // 3
    expect(findCutPoint(s.path, 0, 4, 400, { keepAtLeastBudget: true })).toEqual({
      firstKeptIndex: 1,
      cutIndex: 1,
      turnStartIndex: 0,
      isSplitTurn: true,
    });
    // A budget reached on a cut point cuts there either way.
    expect(findCutPoint(s.path, 0, 4, 10, { keepAtLeastBudget: true })?.cutIndex).toBe(3);
  });

  it("splits a turn when the cut lands on an assistant message inside it", () => {
    const s = new PathBuilder();
    s.user("first", 10); // 0
    s.assistant({ text: "ok" }, 10); // 1
    s.user("huge task", 10); // 2
    s.assistant({ toolCalls: [toolCall("c1", "bash", {})] }, 10); // 3
    s.toolResult("c1", "out", 500); // 4
    s.assistant({ text: "next step" }, 10); // 5
    expect(findCutPoint(s.path, 0, 6, 400)).toEqual({ firstKeptIndex: 5, cutIndex: 5, turnStartIndex: 2, isSplitTurn: true });
  });

  it("keeps metadata before the cut with the kept part without making the cut a split turn", () => {
    const s = new PathBuilder();
    s.exchanges(1, 100); // 0, 1
    s.modelChange("openai", "m"); // 2
    s.thinkingLevel("high"); // 3
    s.add({ type: "label", targetId: "e1", label: "x" }); // 4
    s.user("next", 100); // 5
    s.assistant({ text: "a" }, 100); // 6
    expect(findCutPoint(s.path, 0, 7, 150)).toEqual({ firstKeptIndex: 2, cutIndex: 5, turnStartIndex: -1, isSplitTurn: false });
  });

  it("cuts before trailing tool results that exceed the budget instead of keeping everything", () => {
    const s = new PathBuilder();
    s.exchanges(1, 10); // 0, 1
    s.user("run both", 10); // 2
    s.assistant({ toolCalls: [toolCall("c1", "bash", {}), toolCall("c2", "bash", {})] }, 10); // 3
    s.toolResult("c1", "a", 1000); // 4
    s.toolResult("c2", "b", 1000); // 5
    expect(findCutPoint(s.path, 0, 6, 500)).toEqual({ firstKeptIndex: 3, cutIndex: 3, turnStartIndex: 2, isSplitTurn: true });
  });

  it("cuts at the first cut point when the whole range fits the budget", () => {
    const s = new PathBuilder();
    s.modelChange("openai", "m");
    s.exchanges(2, 10);
    expect(findCutPoint(s.path, 0, 5, 1000)).toEqual({ firstKeptIndex: 0, cutIndex: 1, turnStartIndex: -1, isSplitTurn: false });
  });

  it("does not split when the range starts inside the turn", () => {
    const s = new PathBuilder();
    s.user("task", 10); // 0 (outside the range)
    s.assistant({ text: "step 1" }, 100); // 1
    s.assistant({ text: "step 2" }, 100); // 2
    expect(findCutPoint(s.path, 1, 3, 100)).toEqual({ firstKeptIndex: 2, cutIndex: 2, turnStartIndex: -1, isSplitTurn: false });
  });

  it("treats bash runs, custom messages and branch summaries as clean turn starts", () => {
    const starts = new PathBuilder();
    starts.bash({ command: "ls" }, 100); // 0
    starts.add({ type: "custom_message", customType: "n", content: "x", display: true }, 100); // 1
    starts.add({ type: "branch_summary", summary: "b", fromId: "z" }, 100); // 2
    starts.add({ type: "message", message: { role: "custom", customType: "n", content: "y", display: true } }, 100); // 3
    for (let keep = 100; keep <= 300; keep += 100) {
      const cut = findCutPoint(starts.path, 0, 4, keep);
      expect(cut?.isSplitTurn).toBe(false);
      expect(cut?.cutIndex).toBe(4 - keep / 100);
    }
  });

  it("returns undefined when the range has no valid cut point", () => {
    const s = new PathBuilder();
    s.toolResult("c", "x", 10);
    s.modelChange("a", "b");
    expect(findCutPoint(s.path, 0, 2, 0)).toBeUndefined();
  });

  it("does not count a compaction inside the range towards the kept budget", () => {
    const s = new PathBuilder();
    s.user("kept before", 100); // 0
    s.compaction({ summary: "S", firstKeptEntryId: "e1", tokensBefore: 1 }, 10_000); // 1
    s.user("after", 100); // 2
    s.assistant({ text: "a" }, 100); // 3
    expect(findCutPoint(s.path, 0, 4, 250)?.cutIndex).toBe(0);
  });
});

describe("isValidCutPoint", () => {
  it("accepts user-side and assistant messages, never tool results or metadata", () => {
    const s = new PathBuilder();
    s.toolResult("c", "x");
    s.compaction({ summary: "s", firstKeptEntryId: "e1", tokensBefore: 0 });
    s.add({ type: "custom", customType: "state" });
    expect(s.path.map((item) => isValidCutPoint(item.entry))).toEqual([false, false, false]);
  });
});
