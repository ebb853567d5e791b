import type { CompactionPreparation, CompactionSettings } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { PathBuilder, toolCall } from "../test-support.js";
import { NothingToCompact, prepareCompaction } from "./prepare.js";
import { UPDATE_SUMMARY_PROMPT } from "./prompts.js";
import { assembleCompactionSummary, planCompactionSummary } from "./summary.js";

const settings = (keepRecentTokens: number): CompactionSettings => ({ enabled: true, reserveTokens: 1000, keepRecentTokens });

function prepared(s: PathBuilder, keepRecentTokens: number): CompactionPreparation {
  const result = prepareCompaction(s.path, settings(keepRecentTokens));
  if (!("preparation" in result)) throw new Error(`nothing to compact: ${result.nothing}`);
  return result.preparation;
}

/** Summarize with canned answers and append the compaction entry, as the daemon would. */
function commit(s: PathBuilder, preparation: CompactionPreparation, summaryText = "SUMMARY"): string {
  const plan = planCompactionSummary(preparation);
  const { summary, details } = assembleCompactionSummary(preparation, plan, { history: summaryText, turnPrefix: "PREFIX" });
  return s.compaction({ summary, firstKeptEntryId: preparation.firstKeptEntryId, tokensBefore: preparation.tokensBefore, details }, 50);
}

describe("prepareCompaction", () => {
  it("summarizes the complete turns before a clean cut", () => {
    const s = new PathBuilder();
    s.exchanges(3, 100); // e1..e6
    const preparation = prepared(s, 150);
    expect(preparation).toMatchObject({
      leafId: "e6",
      firstKeptEntryId: "e5",
      summarizeEntryIds: ["e1", "e2", "e3", "e4"],
      turnPrefixMessages: [],
      turnPrefixEntryIds: [],
      isSplitTurn: false,
      tokensBefore: 600,
      fileOps: { readFiles: [], modifiedFiles: [] },
      settings: settings(150),
    });
    expect(preparation.messagesToSummarize.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(preparation.previousSummary).toBeUndefined();
  });

  it("separates the history from the prefix of a split turn", () => {
    const s = new PathBuilder();
    s.user("first", 10); // e1
    s.assistant({ text: "ok" }, 10); // e2
    s.user("huge task", 10); // e3
    s.assistant({ toolCalls: [toolCall("c1", "read", { path: "a.ts" })] }, 10); // e4
    s.toolResult("c1", "out", 500); // e5
    s.assistant({ text: "next step" }, 10); // e6
    const preparation = prepared(s, 400);
    expect(preparation.isSplitTurn).toBe(true);
    expect(preparation.firstKeptEntryId).toBe("e6");
    expect(preparation.summarizeEntryIds).toEqual(["e1", "e2"]);
    expect(preparation.turnPrefixEntryIds).toEqual(["e3", "e4", "e5"]);
    expect(preparation.fileOps.readFiles).toEqual(["a.ts"]);
  });

  it("keeps metadata before a user message with the kept part and does not split the turn", () => {
    const s = new PathBuilder();
    s.exchanges(1, 100); // e1, e2
    s.modelChange("openai", "m"); // e3
    s.user("next", 100); // e4
    s.assistant({ text: "a" }, 100); // e5
    const preparation = prepared(s, 150);
    expect(preparation).toMatchObject({ firstKeptEntryId: "e3", isSplitTurn: false, summarizeEntryIds: ["e1", "e2"] });
  });

  it("compacts nothing in a tiny session", () => {
    const s = new PathBuilder();
    s.exchanges(2, 10);
    expect(prepareCompaction(s.path, settings(20_000))).toEqual({ nothing: NothingToCompact.nothingToSummarize });
  });

  it("compacts nothing when the last entry is already a compaction", () => {
    const s = new PathBuilder();
    s.exchanges(3, 100);
    commit(s, prepared(s, 150));
    expect(prepareCompaction(s.path, settings(150))).toEqual({ nothing: NothingToCompact.alreadyCompacted });
  });

  it("compacts nothing in an empty session", () => {
    expect(prepareCompaction([], settings(1))).toEqual({ nothing: NothingToCompact.emptySession });
  });

  it("still compacts older history when trailing tool results exceed keepRecentTokens", () => {
    const s = new PathBuilder();
    s.exchanges(2, 10); // e1..e4
    s.user("run", 10); // e5
    s.assistant({ toolCalls: [toolCall("c1", "bash", {}), toolCall("c2", "bash", {})] }, 10); // e6
    s.toolResult("c1", "a", 30_000); // e7
    s.toolResult("c2", "b", 30_000); // e8
    const preparation = prepared(s, 20_000);
    expect(preparation.firstKeptEntryId).toBe("e6");
    expect(preparation.summarizeEntryIds).toEqual(["e1", "e2", "e3", "e4"]);
    expect(preparation.turnPrefixEntryIds).toEqual(["e5"]);
  });

  it("summarizes the previous kept tail again, with the previous summary and the update prompt", () => {
    const s = new PathBuilder();
    s.exchanges(3, 100); // e1..e6
    commit(s, prepared(s, 150), "FIRST SUMMARY"); // e7, keeps e5, e6
    s.exchanges(2, 100); // e8..e11
    const preparation = prepared(s, 150);
    expect(preparation.firstKeptEntryId).toBe("e10");
    expect(preparation.summarizeEntryIds).toEqual(["e5", "e6", "e8", "e9"]);
    expect(preparation.previousSummary).toBe("FIRST SUMMARY");
    // tokensBefore: the context as it is: summary (50) + kept e5, e6 + e8..e11.
    expect(preparation.tokensBefore).toBe(50 + 600);
    const plan = planCompactionSummary(preparation);
    expect(plan.history?.prompt).toContain("<previous-summary>\nFIRST SUMMARY\n</previous-summary>");
    expect(plan.history?.prompt.endsWith(UPDATE_SUMMARY_PROMPT)).toBe(true);
    expect(plan.history?.prompt).toContain("[User]: question 2");
  });

  it("starts right after the previous compaction when its first kept entry is not before it", () => {
    const s = new PathBuilder();
    s.exchanges(1, 100); // e1, e2
    s.compaction({ summary: "S", firstKeptEntryId: "unknown", tokensBefore: 1 }, 50); // e3
    s.exchanges(2, 100); // e4..e7
    const preparation = prepared(s, 150);
    expect(preparation.summarizeEntryIds).toEqual(["e4", "e5"]);
    expect(preparation.tokensBefore).toBeNull();
  });

  it("accumulates file lists across three compactions", () => {
    const s = new PathBuilder();
    const turn = (name: string, path: string) => {
      s.user(`${name} ${path}`, 100);
      s.assistant({ toolCalls: [toolCall(`${name}-${path}`, name, { path })] }, 100);
      s.toolResult(`${name}-${path}`, "ok", 100, name);
      s.assistant({ text: "done" }, 100);
    };
    turn("read", "one.ts");
    turn("read", "shared.ts");
    turn("read", "later.ts");
    commit(s, prepared(s, 400));
    turn("edit", "shared.ts");
    turn("write", "two.ts");
    turn("read", "x.ts");
    commit(s, prepared(s, 400));
    turn("read", "three.ts");
    turn("read", "y.ts");
    const third = prepared(s, 400);
    expect(third.fileOps).toEqual({
      readFiles: ["later.ts", "one.ts", "three.ts", "x.ts"],
      modifiedFiles: ["shared.ts", "two.ts"],
    });
    const { summary, details } = assembleCompactionSummary(third, planCompactionSummary(third), { history: "S3" });
    expect(details).toEqual(third.fileOps);
    expect(summary).toBe(
      "S3\n\n<read-files>\nlater.ts\none.ts\nthree.ts\nx.ts\n</read-files>\n\n<modified-files>\nshared.ts\ntwo.ts\n</modified-files>",
    );
  });

  it("does not inherit the file lists of a plugin-made compaction", () => {
    const s = new PathBuilder();
    s.exchanges(1, 100); // e1, e2
    s.compaction(
      {
        summary: "plugin",
        firstKeptEntryId: "e1",
        tokensBefore: 1,
        fromHook: true,
        details: { readFiles: ["p.ts"], modifiedFiles: ["q.ts"] },
      },
      10,
    );
    s.exchanges(2, 100);
    expect(prepared(s, 150).fileOps).toEqual({ readFiles: [], modifiedFiles: [] });
  });

  it("inherits the file lists of daemon-made branch summaries it summarizes, not plugin-made ones", () => {
    const s = new PathBuilder();
    s.add({ type: "branch_summary", summary: "b1", fromId: "x", details: { readFiles: ["b.ts"], modifiedFiles: [] } }, 100);
    s.add({ type: "branch_summary", summary: "b2", fromId: "y", fromHook: true, details: { readFiles: ["h.ts"], modifiedFiles: [] } }, 100);
    s.exchanges(2, 100);
    const preparation = prepared(s, 150);
    expect(preparation.messagesToSummarize.slice(0, 2).map((m) => m.role)).toEqual(["branchSummary", "branchSummary"]);
    expect(preparation.fileOps.readFiles).toEqual(["b.ts"]);
  });

  it("leaves out bash runs excluded from the context", () => {
    const s = new PathBuilder();
    s.bash({ command: "secret", excludeFromContext: true }, 0); // e1
    s.exchanges(2, 100); // e2..e5
    expect(prepared(s, 150).summarizeEntryIds).toEqual(["e2", "e3"]);
  });
});
