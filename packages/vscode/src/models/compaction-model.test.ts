import type { CompactionResult } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { compactionOutcome, summarizerName } from "./compaction-model.js";
import { report } from "./test-support.js";

const retention = report({ files: [16, 16], errors: [1, 2], requests: [3, 3] }, { errors: ["TypeError: x is undefined"] });
const stats = {
  summarizedMessages: 40,
  turnPrefixMessages: 0,
  keptEntries: 12,
  isSplitTurn: false,
  tokensBefore: 53_210,
  durationMs: 812,
  tokensAfter: 9_120,
  tokensSaved: 44_090,
};

describe("compactionOutcome", () => {
  it("a committed summary: tokens before and after, who wrote it, what it kept; the report has the summary and what it lost", () => {
    const result: CompactionResult = {
      status: "committed",
      rung: "summarize",
      summarizer: "extractive",
      stats,
      retention,
      entry: { type: "compaction", id: "c9", parentId: "e1", timestamp: "2026-03-01T10:00:00.000Z", summary: "## Goal\nShip it", firstKeptEntryId: "e0", tokensBefore: 53_210 },
    } as CompactionResult;
    const outcome = compactionOutcome(result, "Refresh tokens");
    expect(outcome.level).toBe("warning");
    expect(outcome.message).toBe(
      'Compacted "Refresh tokens" · 53,210 → 9,120 tokens · summary by the built-in extractive summarizer (offline) · ' +
        "kept 16/16 files, 1/2 errors, 3/3 requests.",
    );
    expect(outcome.report).toContain("- summarized: 40 messages; kept verbatim: 12 entries");
    expect(outcome.report).toContain("**Retention:** kept 16/16 files, 1/2 errors, 3/3 requests");
    expect(outcome.report).toContain("- errors: TypeError: x is undefined");
    expect(outcome.report).toContain("## Summary\n\n```markdown\n## Goal\nShip it\n```");
  });

  it("a prune, nothing to do, compaction off, a stale run, a cancelled one", () => {
    const pruned = compactionOutcome(
      { status: "committed", rung: "prune", stats, pruned: { entryId: "p1", outputs: 3, tokensSaved: 4_000 } } as CompactionResult,
      "s",
    );
    expect(pruned).toMatchObject({ level: "info", message: 'Pruned "s" · 53,210 → 9,120 tokens · 3 tool outputs hidden.' });
    expect(compactionOutcome({ status: "nothing_to_compact", message: "the session is too short" }, "s").message).toBe('Nothing to compact in "s": the session is too short.');
    expect(compactionOutcome({ status: "disabled" }, "s")).toMatchObject({ level: "warning", message: 'Compaction is off for "s".' });
    expect(compactionOutcome({ status: "stale" }, "s").message).toContain("nothing was committed. Compact again.");
    expect(compactionOutcome({ status: "cancelled", message: "plugin x cancelled it" }, "s").message).toBe(
      'The compaction of "s" was cancelled: plugin x cancelled it; nothing was written.',
    );
  });

  it("names the summarizers people do not know by their id", () => {
    expect(summarizerName("openai:gpt-4.1-mini")).toBe("openai:gpt-4.1-mini");
    expect(summarizerName(undefined)).toBe("unknown");
  });
});
