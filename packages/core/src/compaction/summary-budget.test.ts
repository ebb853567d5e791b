import type { CompactionPreparation } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { planCompactionSummary } from "./summary.js";
import { planWithinBudget, windowSummaryBudget } from "./summary-budget.js";
import { preparationOf } from "../test-support.js";

/** An 8,000-token window: reserve 2,000, summary budget 1,600. */
const RESERVE = 2_000;

const preparation = (overrides: Partial<CompactionPreparation>) =>
  preparationOf({ settings: { enabled: true, reserveTokens: RESERVE, keepRecentTokens: 2_000 }, ...overrides });

describe("windowSummaryBudget", () => {
  it("is 0.8 × reserve for the whole summary, an eighth of it for repair, four bytes a token, and names the window", () => {
    expect(windowSummaryBudget(8_000, RESERVE)).toEqual({
      tokens: 1_600,
      repairTokens: 200,
      maxBytes: 6_400,
      limitName: "the summary budget of a 8000-token window (0.8 × compaction.reserveTokens)",
    });
  });
});

describe("planWithinBudget", () => {
  const budget = windowSummaryBudget(8_000, RESERVE);

  it("asks for the history in what repair leaves of the budget", () => {
    const prepared = preparation({});
    const plan = planWithinBudget(planCompactionSummary(prepared), prepared, budget);
    expect(plan.history?.maxTokens).toBe(1_400);
  });

  it("shares it between history and a split turn's prefix as their own budgets are (0.8 : 0.5), after the file lists", () => {
    const readFiles = Array.from({ length: 40 }, (_, i) => `src/file${i}.ts`);
    const prepared = preparation({
      isSplitTurn: true,
      turnPrefixMessages: [{ role: "user", content: "the turn's request" }],
      turnPrefixEntryIds: ["t"],
      fileOps: { readFiles, modifiedFiles: [] },
    });
    const plan = planWithinBudget(planCompactionSummary(prepared), prepared, budget);
    const history = plan.history!.maxTokens;
    const prefix = plan.turnPrefix!.maxTokens;
    const lists = Math.ceil((`\n\n<read-files>\n${readFiles.join("\n")}\n</read-files>`.length + 40) / 4);
    expect(history + prefix).toBeLessThanOrEqual(1_400 - lists + 1);
    expect(history + prefix).toBeGreaterThan(1_400 - lists - 20);
    expect(history / prefix).toBeCloseTo(0.8 / 0.5, 1);
  });

  it("counts a carried history when only the turn prefix is asked for, and never asks for less than a few lines", () => {
    const prepared = preparation({
      messagesToSummarize: [],
      summarizeEntryIds: [],
      isSplitTurn: true,
      turnPrefixMessages: [{ role: "user", content: "the turn's request" }],
      turnPrefixEntryIds: ["t"],
      previousSummary: "x".repeat(20_000),
    });
    const plan = planWithinBudget(planCompactionSummary(prepared), prepared, budget);
    expect(plan.history).toBeUndefined();
    expect(plan.turnPrefix!.maxTokens).toBe(100);
  });

  it("never raises a part above its own budget", () => {
    const roomy = windowSummaryBudget(8_000, RESERVE);
    const prepared = preparation({ settings: { enabled: true, reserveTokens: 500, keepRecentTokens: 2_000 } });
    expect(planWithinBudget(planCompactionSummary(prepared), prepared, roomy).history!.maxTokens).toBe(400);
  });
});
