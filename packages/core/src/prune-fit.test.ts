import type { CompactionSettings } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { prepareCompaction } from "./compaction/prepare.js";
import { planPrune, planTailPrune, pruneEntryInput, prunedOutputs, withPrunedCounts } from "./prune.js";
import { fitPlan, tokensFrom } from "./prune-fit.js";
import { PathBuilder, toolCall } from "./test-support.js";

/** A file of `lines` numbered lines, ~10 tokens each. */
const file = (lines: number) => Array.from({ length: lines }, (_, i) => `line ${i + 1} of the file says something`).join("\n");

/** `outputs` answered reads of `tokens` each, then a short exchange. */
function reads(outputs: number, tokens: number): PathBuilder {
  const s = new PathBuilder();
  s.user("look at the files", 20);
  for (let i = 0; i < outputs; i++) {
    s.assistant({ toolCalls: [toolCall(`c${i}`, "read", { path: `f${i}.ts` })] }, 30);
    s.toolResult(`c${i}`, file(tokens / 10), tokens, "read");
    s.assistant({ text: `read f${i}.ts` }, 50);
  }
  s.user("thanks", 10);
  s.assistant({ text: "done" }, 10);
  return s;
}

const contextTokens = (s: PathBuilder) => tokensFrom(withPrunedCounts(s.path, prunedOutputs(s.path)), 0);

describe("fitPlan", () => {
  it("hides the oldest outputs only until the context is down to the target; the newer ones stay whole", () => {
    const s = reads(5, 3_000);
    const plan = planPrune(s.path, { protectTokens: 0, minTokens: 500 });
    expect(plan.hidden).toHaveLength(5);
    const tokens = contextTokens(s);
    const fitted = fitPlan(s.path, plan, { tokens, targetTokens: tokens - 5_000, floorTokens: 2_000 });
    expect(fitted.hidden.map((item) => item.args)).toEqual(["f0.ts", "f1.ts"]);
    expect(fitted.hidden.every((item) => item.excerpt === undefined)).toBe(true);
    expect(tokens - fitted.tokensSaved).toBeLessThanOrEqual(tokens - 5_000);
  });

  it("never takes the context under the floor: the output that would is cut to what lands on it", () => {
    const s = reads(2, 3_000);
    const plan = planPrune(s.path, { protectTokens: 0, minTokens: 500 });
    const tokens = contextTokens(s);
    const floorTokens = tokens - 4_000;
    const fitted = fitPlan(s.path, plan, { tokens, floorTokens });
    expect(fitted.hidden).toHaveLength(2);
    const [stub, cut] = fitted.hidden;
    expect(stub!.excerpt).toBeUndefined();
    expect(cut!.excerpt?.head.startsWith("line 1 of the file")).toBe(true);
    const after = tokens - fitted.tokensSaved;
    // Whole lines: a little over the floor, never under it.
    expect(after).toBeGreaterThanOrEqual(floorTokens);
    expect(after).toBeLessThanOrEqual(floorTokens + 60);
    expect(cut!.excerpt!.head.endsWith("something")).toBe(true);
    expect(cut!.excerpt!.tail.startsWith("line ")).toBe(true);
    // Written, the context counts what the plan said.
    s.add(pruneEntryInput(fitted));
    expect(contextTokens(s)).toBe(after);
  });

  it("takes nothing when the context is at the target already, and the plan as it is when all of it fits", () => {
    const s = reads(3, 3_000);
    const plan = planPrune(s.path, { protectTokens: 0, minTokens: 500 });
    const tokens = contextTokens(s);
    expect(fitPlan(s.path, plan, { tokens, targetTokens: tokens, floorTokens: 0 }).hidden).toEqual([]);
    expect(fitPlan(s.path, plan, { tokens, floorTokens: 0 })).toBe(plan);
  });
});

describe("prepareCompaction with a window (keepAtLeastBudget)", () => {
  const settings: CompactionSettings = { enabled: true, reserveTokens: 2_000, keepRecentTokens: 2_000 };

  it("hides the kept part's outputs only while it keeps keepRecentTokens: one larger than the rest is cut, not hidden", () => {
    const s = new PathBuilder();
    s.user("read the log", 100);
    s.assistant({ toolCalls: [toolCall("c", "read", { path: "big.log" })] }, 20);
    const output = s.toolResult("c", file(600), 6_000, "read");
    s.assistant({ text: "the log says it failed" }, 200);

    const prepared = prepareCompaction(s.path, settings, { pruneMinTokens: 500, keepAtLeastBudget: true });
    if (!("preparation" in prepared)) throw new Error("expected a preparation");
    const [cut] = prepared.preparation.prune!.hidden;
    expect(cut).toMatchObject({ entryId: output, tokens: 6_000 });
    expect(cut!.excerpt).toBeDefined();
    const firstKept = s.ids().indexOf(prepared.preparation.firstKeptEntryId);
    const kept = tokensFrom(withPrunedCounts(s.path, new Map([[output, cut!]])), firstKept);
    expect(kept).toBeGreaterThanOrEqual(2_000);
    expect(kept).toBeLessThan(2_100);
  });

  it("hides every kept output when the conversation alone fills the kept part", () => {
    const s = reads(12, 1_000);
    const tail = planTailPrune(s.path, 500, 0);
    const prepared = prepareCompaction(s.path, { ...settings, keepRecentTokens: 300 }, { pruneMinTokens: 500, keepAtLeastBudget: true });
    if (!("preparation" in prepared)) throw new Error("expected a preparation");
    const hidden = prepared.preparation.prune?.hidden ?? [];
    expect(hidden.length).toBeGreaterThan(0);
    expect(hidden.every((item) => item.excerpt === undefined)).toBe(true);
    expect(tail.hidden.map((item) => item.entryId)).toEqual(expect.arrayContaining(hidden.map((item) => item.entryId)));
  });
});
