import { describe, expect, it } from "vitest";
import { PathBuilder } from "./test-support.js";
import { contextUsage, estimateContextTokens, shouldCompact, usageTotalTokens, type UsageSettings } from "./usage.js";

const on: UsageSettings = {
  compaction: {
    enabled: true,
    reserveTokens: 1000,
    keepRecentTokens: 500,
    prune: { enabled: true, protectTokens: 40_000, minTokens: 1_000, minSavings: 20_000 },
  },
  context: { mode: "on" },
};

describe("usageTotalTokens", () => {
  it("uses totalTokens, or the sum of the parts when it is absent or zero", () => {
    expect(usageTotalTokens({ input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 50 })).toBe(50);
    expect(usageTotalTokens({ input: 1, output: 2, cacheRead: 3, cacheWrite: 4 })).toBe(10);
    expect(usageTotalTokens({ input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 0 })).toBe(10);
  });
});

describe("estimateContextTokens", () => {
  it("never reports less than the stored counts of what the context holds, whatever a usage report says", () => {
    const s = new PathBuilder();
    s.user("a long request", 3_000);
    s.toolResult("c1", "a long output", 2_000);
    // A server that counts a quarter of the characters of the messages, and no tool schemas.
    s.assistant({ text: "a", usage: { input: 900, output: 100 } }, 20);
    s.user("more", 7);
    expect(estimateContextTokens(s.path)).toMatchObject({ tokens: 5_027, usageTokens: 1_000, trailingTokens: 7 });
  });

  it("adds the counts of the entries after the last usage to it", () => {
    const s = new PathBuilder();
    s.user("q", 10);
    s.assistant({ text: "a", usage: { input: 900, output: 100 } }, 20); // e2
    s.user("more", 7);
    s.user("again", 3);
    expect(estimateContextTokens(s.path)).toEqual({
      tokens: 1010,
      usageTokens: 1000,
      trailingTokens: 10,
      usageEntryId: "e2",
      measurable: true,
    });
  });

  it("ignores aborted and failed replies and falls back to the previous one", () => {
    const s = new PathBuilder();
    s.assistant({ text: "ok", usage: { totalTokens: 400 } }, 1); // e1
    s.assistant({ text: "x", usage: { totalTokens: 9000 }, stopReason: "aborted" }, 2);
    s.assistant({ text: "y", usage: { totalTokens: 9000 }, stopReason: "error" }, 3);
    const estimate = estimateContextTokens(s.path);
    expect(estimate.usageEntryId).toBe("e1");
    expect(estimate.tokens).toBe(400 + 2 + 3);
  });

  it("treats a zero usage as no usage", () => {
    const s = new PathBuilder();
    s.user("q", 10);
    s.assistant({ text: "a", usage: {} }, 20);
    expect(estimateContextTokens(s.path)).toMatchObject({ tokens: 30, usageTokens: null, trailingTokens: 30 });
  });

  it("without any usage, sums the counts of what the context holds", () => {
    const s = new PathBuilder();
    s.user("q", 10);
    s.assistant({ text: "a" }, 20);
    expect(estimateContextTokens(s.path)).toMatchObject({ tokens: 30, usageTokens: null, trailingTokens: 30 });
  });

  it("ignores a usage older than the latest compaction (even in the kept tail)", () => {
    const s = new PathBuilder();
    s.user("old", 100); // e1
    s.assistant({ text: "old", usage: { totalTokens: 50_000 } }, 100); // e2, kept
    s.compaction({ summary: "S", firstKeptEntryId: "e2", tokensBefore: 50_000 }, 30); // e3
    s.user("new", 5);
    expect(estimateContextTokens(s.path)).toMatchObject({ tokens: 30 + 100 + 5, usageTokens: null });
  });

  it("uses a usage reported after the latest compaction", () => {
    const s = new PathBuilder();
    s.user("old", 100);
    s.compaction({ summary: "S", firstKeptEntryId: "e1", tokensBefore: 1 }, 30);
    s.assistant({ text: "new", usage: { totalTokens: 700 } }, 8);
    s.user("next", 4);
    expect(estimateContextTokens(s.path)).toMatchObject({ tokens: 704, usageTokens: 700, trailingTokens: 4 });
  });

  it("is not measurable when the compaction's kept tail is missing", () => {
    const s = new PathBuilder();
    s.compaction({ summary: "S", firstKeptEntryId: "gone", tokensBefore: 1 }, 30);
    s.user("q", 1);
    expect(estimateContextTokens(s.path).measurable).toBe(false);
  });
});

describe("shouldCompact", () => {
  it("triggers strictly above contextWindow − reserveTokens", () => {
    expect(shouldCompact(9000, 10_000, on)).toBe(false);
    expect(shouldCompact(9001, 10_000, on)).toBe(true);
  });

  it("never triggers when compaction is disabled or the context mode is off", () => {
    expect(shouldCompact(99_999, 10_000, { ...on, compaction: { ...on.compaction, enabled: false } })).toBe(false);
    expect(shouldCompact(99_999, 10_000, { ...on, context: { mode: "off" } })).toBe(false);
  });
});

describe("contextUsage", () => {
  it("reports the estimate, the threshold and the decision", () => {
    const s = new PathBuilder();
    s.assistant({ text: "a", usage: { totalTokens: 9000 } }, 1);
    s.user("q", 2);
    expect(contextUsage(s.path, 10_000, on)).toEqual({
      tokens: 9002,
      usageTokens: 9000,
      trailingTokens: 2,
      threshold: 9000,
      shouldCompact: true,
      settings: { reserveTokens: on.compaction.reserveTokens, keepRecentTokens: on.compaction.keepRecentTokens },
      reason: "9002 tokens > threshold 9000",
    });
  });

  it("adds settings that cannot fit the window to the reason, whatever the decision", () => {
    const s = new PathBuilder();
    s.user("q", 20);
    const conflict = "the compaction settings cannot fit the model's window";
    expect(contextUsage(s.path, 10_000, on, conflict).reason).toBe(conflict);
    s.user("q", 9_000);
    expect(contextUsage(s.path, 10_000, on, conflict).reason).toBe(`9020 tokens > threshold 9000; ${conflict}`);
  });

  it("says why it will not compact when settings turn it off", () => {
    const s = new PathBuilder();
    s.user("q", 20_000);
    const report = contextUsage(s.path, 10_000, { ...on, context: { mode: "off" } });
    expect(report.shouldCompact).toBe(false);
    expect(report.reason).toBe('context.mode is "off"');
  });

  it("gives no reason when under the threshold", () => {
    const s = new PathBuilder();
    s.user("q", 20);
    expect(contextUsage(s.path, 10_000, on).reason).toBeUndefined();
  });
});
