import { describe, expect, it } from "vitest";
import { PathBuilder, toolCall } from "../test-support.js";
import { prepareBranchEntries } from "./prepare.js";

describe("prepareBranchEntries", () => {
  it("takes every message but tool results when there is no budget", () => {
    const s = new PathBuilder();
    s.user("q", 10);
    s.assistant({ toolCalls: [toolCall("c1", "read", { path: "a.ts" })] }, 10);
    s.toolResult("c1", "body", 10_000);
    s.assistant({ text: "done" }, 10);
    s.modelChange("openai", "m");
    const preparation = prepareBranchEntries(s.path);
    expect(preparation.entryIds).toEqual(["e1", "e2", "e4"]);
    expect(preparation.totalTokens).toBe(30);
    expect(preparation.fileOps).toEqual({ readFiles: ["a.ts"], modifiedFiles: [] });
  });

  it("fills the budget newest first and stops at the first message that does not fit", () => {
    const s = new PathBuilder();
    s.user("old", 50); // e1
    s.user("middle", 60); // e2
    s.user("new", 30); // e3
    s.user("newest", 30); // e4
    const preparation = prepareBranchEntries(s.path, 100);
    expect(preparation.entryIds).toEqual(["e3", "e4"]);
    expect(preparation.totalTokens).toBe(60);
  });

  it("squeezes in one summary past the budget while under 90 % of it", () => {
    const s = new PathBuilder();
    s.user("older", 5); // e1
    s.compaction({ summary: "S", firstKeptEntryId: "e1", tokensBefore: 1 }, 50); // e2
    s.user("recent", 80); // e3
    const preparation = prepareBranchEntries(s.path, 100);
    expect(preparation.entryIds).toEqual(["e2", "e3"]);
    expect(preparation.messages[0]).toMatchObject({ role: "compactionSummary", summary: "S" });
    expect(preparation.totalTokens).toBe(130);
  });

  it("does not squeeze a summary in once 90 % of the budget is used", () => {
    const s = new PathBuilder();
    s.add({ type: "branch_summary", summary: "B", fromId: "x" }, 50); // e1
    s.user("recent", 90); // e2
    expect(prepareBranchEntries(s.path, 100).entryIds).toEqual(["e2"]);
  });

  it("does not squeeze in an ordinary message", () => {
    const s = new PathBuilder();
    s.user("big", 50);
    s.user("recent", 10);
    expect(prepareBranchEntries(s.path, 40).entryIds).toEqual(["e2"]);
  });

  it("tracks files across the whole branch, and from daemon-made branch summaries only", () => {
    const s = new PathBuilder();
    s.assistant({ toolCalls: [toolCall("c1", "edit", { path: "early.ts" })] }, 1000); // does not fit
    s.add({ type: "branch_summary", summary: "B", fromId: "x", details: { readFiles: ["nested.ts"], modifiedFiles: ["n2.ts"] } }, 1);
    s.add(
      { type: "branch_summary", summary: "P", fromId: "y", fromHook: true, details: { readFiles: ["plugin.ts"], modifiedFiles: [] } },
      1,
    );
    s.assistant({ toolCalls: [toolCall("c2", "read", { path: "late.ts" })] }, 10);
    const preparation = prepareBranchEntries(s.path, 100);
    expect(preparation.entryIds).toEqual(["e2", "e3", "e4"]);
    expect(preparation.fileOps).toEqual({ readFiles: ["late.ts", "nested.ts"], modifiedFiles: ["early.ts", "n2.ts"] });
  });
});
