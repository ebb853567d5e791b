import type { CompactionPreparation } from "@base-context/protocol";
import { utf8ByteLength, windowSummaryBudget } from "@base-context/core";
import { describe, expect, it } from "vitest";
import { retainCompactionSummary } from "./retention.js";

/** A 4,096-token window's preparation (reserve 1,024): summarized reads of 60 files the summary does not name. */
function preparation(): CompactionPreparation {
  const readFiles = Array.from({ length: 60 }, (_, i) => `src/module-${i}/index.ts`);
  return {
    leafId: "leaf",
    firstKeptEntryId: "kept",
    messagesToSummarize: [{ role: "user", content: "refactor the modules" }],
    summarizeEntryIds: ["h"],
    turnPrefixMessages: [],
    turnPrefixEntryIds: [],
    isSplitTurn: false,
    tokensBefore: 3_500,
    fileOps: { readFiles, modifiedFiles: [] },
    settings: { enabled: true, reserveTokens: 1_024, keepRecentTokens: 1_024 },
  };
}

describe("retainCompactionSummary with a window's summary budget", () => {
  const budget = windowSummaryBudget(4_096, 1_024);
  const long = `## Goal\n${"Refactor every module of the service one at a time. ".repeat(120)}`;

  it("caps the stored summary, repair lines included, at 0.8 × reserve and names the budget in the note", () => {
    const { summary, retention } = retainCompactionSummary(preparation(), long, { repair: true, maxBytes: 256_000, budget });
    expect(budget.tokens).toBe(819);
    expect(utf8ByteLength(summary)).toBeLessThanOrEqual(budget.maxBytes);
    expect(summary).toContain("[summary cut at 3276 bytes: the summary budget of a 4096-token window (0.8 × compaction.reserveTokens)]");
    // Repair added what it could within its share (an eighth of the budget), before the body was cut for it.
    expect(retention.repaired?.files ?? 0).toBeGreaterThan(0);
  });

  it("leaves a summary within the budget as it is, and uses limits.maxSummaryBytes when that is lower", () => {
    const short = "## Goal\nRefactor the modules.";
    expect(retainCompactionSummary(preparation(), short, { repair: false, maxBytes: 256_000, budget }).summary).toBe(short);
    const capped = retainCompactionSummary(preparation(), long, { repair: false, maxBytes: 1_000, budget }).summary;
    expect(utf8ByteLength(capped)).toBeLessThanOrEqual(1_000);
    expect(capped).toContain("limits.maxSummaryBytes]");
  });
});
