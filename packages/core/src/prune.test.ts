import type { CompactionSettings } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { prepareCompaction } from "./compaction/prepare.js";
import { buildContext } from "./context.js";
import {
  chooseRung,
  planPrune,
  planTailPrune,
  pruneEntryInput,
  prunedOutputs,
  pruneStub,
  stubTokenCount,
  withPrunedCounts,
} from "./prune.js";
import { planTruncation, truncationLimits } from "./truncation.js";
import { PathBuilder, toolCall } from "./test-support.js";
import { estimateContextTokens } from "./usage.js";

const LIMITS = { protectTokens: 40_000, minTokens: 1_000 };

/** user → assistant(read path) → tool result of `tokens` → assistant answer, per step. */
function agentRun(steps: { path: string; tokens: number }[], answerTokens = 200): PathBuilder {
  const s = new PathBuilder();
  s.user("fix the bug", 20);
  steps.forEach((step, i) => {
    s.assistant({ toolCalls: [toolCall(`c${i}`, "read", { path: step.path })] }, 30);
    s.toolResult(`c${i}`, `contents of ${step.path}`, step.tokens, "read");
    s.assistant({ text: `looked at ${step.path}` }, answerTokens);
  });
  return s;
}

function addPrune(s: PathBuilder, plan: ReturnType<typeof planPrune>): string {
  return s.add(pruneEntryInput(plan));
}

describe("the prune stub", () => {
  it("names the tool, its telling argument and the size", () => {
    expect(pruneStub({ toolName: "read", args: "src/app.ts", tokens: 12_345 })).toBe(
      "[output of read src/app.ts pruned: 12,345 tokens — call the tool again to see it]",
    );
  });
});

describe("planPrune", () => {
  it("hides large tool results older than the protected window, never small or recent ones", () => {
    const s = agentRun([
      { path: "old-big.ts", tokens: 30_000 },
      { path: "old-small.ts", tokens: 500 },
      { path: "recent-big.ts", tokens: 30_000 },
      { path: "newest.ts", tokens: 15_000 },
    ]);
    const plan = planPrune(s.path, LIMITS);
    expect(plan.hidden.map((item) => item.args)).toEqual(["old-big.ts"]);
    expect(plan.hidden[0]).toMatchObject({ entryId: "e3", toolName: "read", tokens: 30_000 });
    expect(plan.tokensSaved).toBe(30_000 - plan.hidden[0]!.stubTokens);
    expect(plan.hidden[0]!.stubTokens).toBe(stubTokenCount(pruneStub(plan.hidden[0]!)));
  });

  it("never hides a tool result the model has not answered yet", () => {
    const s = agentRun([{ path: "a.ts", tokens: 50_000 }]);
    s.assistant({ toolCalls: [toolCall("late", "bash", { command: "find ." })] }, 30);
    s.toolResult("late", "listing", 60_000, "bash");
    expect(planPrune(s.path, { protectTokens: 0, minTokens: 1_000 }).hidden.map((item) => item.entryId)).toEqual(["e3"]);
  });

  it("pruning twice hides nothing twice", () => {
    const s = agentRun([
      { path: "a.ts", tokens: 30_000 },
      { path: "b.ts", tokens: 30_000 },
      { path: "c.ts", tokens: 30_000 },
      { path: "d.ts", tokens: 30_000 },
    ]);
    const first = planPrune(s.path, LIMITS);
    expect(first.hidden.length).toBeGreaterThan(0);
    addPrune(s, first);
    expect(planPrune(s.path, LIMITS).hidden).toEqual([]);
    // Later outputs push older ones out of the window: only those are new.
    s.user("next", 20);
    s.assistant({ toolCalls: [toolCall("c9", "read", { path: "e.ts" })] }, 30);
    s.toolResult("c9", "e", 45_000, "read");
    s.assistant({ text: "ok" }, 100);
    const second = planPrune(s.path, LIMITS);
    const firstIds = new Set(first.hidden.map((item) => item.entryId));
    expect(second.hidden.length).toBeGreaterThan(0);
    expect(second.hidden.some((item) => firstIds.has(item.entryId))).toBe(false);
  });
});

describe("buildContext with a prune entry", () => {
  it("shows hidden outputs as stubs, counts the stub, and leaves the stored entry alone", () => {
    const s = agentRun([
      { path: "a.ts", tokens: 30_000 },
      { path: "b.ts", tokens: 45_000 },
    ]);
    const before = buildContext({ path: s.path });
    const plan = planPrune(s.path, LIMITS);
    addPrune(s, plan);
    const after = buildContext({ path: s.path });
    expect(after.prunedEntryIds).toEqual(["e3"]);
    expect(after.prunedTokens).toBe(plan.tokensSaved);
    expect(after.tokens).toBe(before.tokens - plan.tokensSaved);
    const stubbed = after.messages[after.entryIds.indexOf("e3")]!;
    expect(stubbed).toMatchObject({ role: "toolResult", toolCallId: "c0", toolName: "read" });
    expect(stubbed.role === "toolResult" && stubbed.content).toEqual([{ type: "text", text: pruneStub(plan.hidden[0]!) }]);
    const stored = s.path.find((item) => item.entry.id === "e3")!.entry;
    expect(stored.type === "message" && stored.message.role === "toolResult" && stored.message.content).toEqual([
      { type: "text", text: "contents of a.ts" },
    ]);
  });

  it("the usage estimate drops by what a prune after the last reply saved", () => {
    const s = agentRun([
      { path: "a.ts", tokens: 30_000 },
      { path: "b.ts", tokens: 45_000 },
    ]);
    s.assistant({ text: "done", usage: { input: 90_000, output: 100 } }, 100);
    const plan = planPrune(s.path, LIMITS);
    expect(plan.hidden.length).toBe(1);
    const before = estimateContextTokens(s.path).tokens;
    addPrune(s, plan);
    expect(estimateContextTokens(s.path).tokens).toBe(before - plan.tokensSaved);
  });
});

describe("a prune entry written by a client", () => {
  it("hides only tool results, and saves what the stored counts say, whatever it claims", () => {
    const s = agentRun([{ path: "a.ts", tokens: 5_000 }]);
    s.assistant({ text: "done", usage: { input: 6_000, output: 10 } }, 10);
    const before = buildContext({ path: s.path });
    const estimateBefore = estimateContextTokens(s.path).tokens;
    s.add({
      type: "prune",
      hidden: [
        { entryId: "e1", toolName: "user", args: "", tokens: 1_000_000, stubTokens: 1 }, // a user message: ignored
        { entryId: "e3", toolName: "read", args: "a.ts", tokens: 1_000_000, stubTokens: 20 },
        { entryId: "nope", toolName: "read", args: "", tokens: 1_000_000, stubTokens: 1 }, // not on the path
      ],
      tokensSaved: 3_000_000,
    });
    const after = buildContext({ path: s.path });
    expect(after.prunedEntryIds).toEqual(["e3"]);
    expect(after.prunedTokens).toBe(5_000 - 20);
    expect(after.tokens).toBe(before.tokens - (5_000 - 20));
    // The stub's count stands behind the stubbed message, and the counts still add up to the total.
    expect(after.messageTokens[after.entryIds.indexOf("e3")]).toBe(20);
    expect(after.messageTokens.reduce((sum, n) => sum + n, 0)).toBe(after.tokens);
    expect(after.messages[0]).toEqual(before.messages[0]);
    expect(estimateContextTokens(s.path).tokens).toBe(estimateBefore - (5_000 - 20));
  });
});

describe("chooseRung", () => {
  it("prunes only when that alone leaves minSavings under the threshold", () => {
    const plan = { hidden: [{ entryId: "x", toolName: "t", args: "", tokens: 50_000, stubTokens: 20 }], tokensSaved: 49_980 };
    expect(chooseRung(190_000, 183_616, plan, 20_000)).toBe("prune");
    expect(chooseRung(220_000, 183_616, plan, 20_000)).toBe("summarize");
    expect(chooseRung(190_000, 183_616, { hidden: [], tokensSaved: 0 }, 20_000)).toBe("summarize");
  });
});

describe("prepareCompaction with tail pruning", () => {
  const settings: CompactionSettings = { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 };

  /** Earlier conversation, then the user's last messages around one huge `find .` listing. */
  function dumpAtTheEnd(): PathBuilder {
    const s = new PathBuilder();
    s.exchanges(20, 2_000);
    s.user("where is the config loaded?", 30); // e41
    s.assistant({ toolCalls: [toolCall("f", "bash", { command: "find ." })] }, 30);
    s.toolResult("f", "./a\n./b", 27_580, "bash"); // e43
    s.assistant({ text: "it is in src/config.ts" }, 60);
    s.user("and where is it validated?", 30); // e45
    s.assistant({ text: "in src/validate.ts" }, 60);
    s.user("thanks, now add a test", 30); // e47
    s.assistant({ text: "added test/config.test.ts" }, 60);
    return s;
  }

  it("keeps the user's last messages instead of one dump, and hides the dump in the kept tail", () => {
    const s = dumpAtTheEnd();
    const plain = prepareCompaction(s.path, settings);
    const pruned = prepareCompaction(s.path, settings, { pruneMinTokens: 1_000 });
    if (!("preparation" in plain) || !("preparation" in pruned)) throw new Error("expected preparations");
    const keptFrom = (id: string) => s.ids().slice(s.ids().indexOf(id));
    // Without pruning the kept tail starts after the dump: "where is the config loaded?" is summarized.
    expect(keptFrom(plain.preparation.firstKeptEntryId)).not.toContain("e41");
    // With it, the user's last three messages are all kept.
    expect(keptFrom(pruned.preparation.firstKeptEntryId)).toEqual(expect.arrayContaining(["e41", "e45", "e47"]));
    expect(pruned.preparation.prune?.hidden.map((item) => item.entryId)).toEqual(["e43"]);
    // The summarizer still sees every output it summarizes in full.
    expect(JSON.stringify(pruned.preparation.messagesToSummarize)).not.toContain("pruned:");
  });

  it("still summarizes when the stubs would make everything fit: the old cut, its kept tail pruned", () => {
    const s = new PathBuilder();
    s.exchanges(3, 1_000);
    s.user("list everything", 30);
    s.assistant({ toolCalls: [toolCall("f", "bash", { command: "find ." })] }, 30);
    s.toolResult("f", "listing", 30_000, "bash"); // e9
    s.assistant({ text: "here it is" }, 60);
    s.user("thanks", 30);
    s.assistant({ text: "you are welcome" }, 60);
    const plain = prepareCompaction(s.path, settings);
    const pruned = prepareCompaction(s.path, settings, { pruneMinTokens: 1_000 });
    if (!("preparation" in plain) || !("preparation" in pruned)) throw new Error("expected preparations");
    expect(pruned.preparation.firstKeptEntryId).toBe(plain.preparation.firstKeptEntryId);
    expect(pruned.preparation.messagesToSummarize).toEqual(plain.preparation.messagesToSummarize);
  });

  it("without the option the cut is exactly the old one", () => {
    const s = dumpAtTheEnd();
    expect(prepareCompaction(s.path, settings, {})).toEqual(prepareCompaction(s.path, settings));
  });

  it("hides only outputs of the kept tail; older ones are summarized, with their reads in the file lists", () => {
    const s = new PathBuilder();
    s.user("start", 30);
    s.assistant({ toolCalls: [toolCall("r", "read", { path: "src/old.ts" })] }, 30);
    s.toolResult("r", "old", 30_000, "read"); // e3
    s.assistant({ text: "ok" }, 30);
    s.exchanges(10, 2_500);
    const tail = planTailPrune(s.path, 1_000, 0);
    expect(tail.hidden.map((item) => item.entryId)).toEqual(["e3"]);
    const prepared = prepareCompaction(s.path, settings, { pruneMinTokens: 1_000 });
    if (!("preparation" in prepared)) throw new Error("expected a preparation");
    expect(prepared.preparation.prune).toBeUndefined();
    expect(prepared.preparation.fileOps.readFiles).toContain("src/old.ts");
  });
});

describe("planTruncation", () => {
  /** A file of `lines` numbered lines, ~10 tokens each (its count stored as the daemon would). */
  const file = (lines: number) => Array.from({ length: lines }, (_, i) => `line ${i + 1} of the file says something`).join("\n");

  it("cuts an output the model has not read yet to half of the window, keeping its beginning and end", () => {
    const s = agentRun([{ path: "a.ts", tokens: 500 }]);
    s.assistant({ toolCalls: [toolCall("big", "read", { path: "huge.log" })] }, 30);
    const text = file(3_000);
    const id = s.toolResult("big", text, 30_000, "read");
    const plan = planTruncation(s.path, truncationLimits(8_000, true));
    expect(plan.hidden).toHaveLength(1);
    const [cut] = plan.hidden;
    expect(cut).toMatchObject({ entryId: id, toolName: "read", args: "huge.log", tokens: 30_000 });
    expect(cut!.stubTokens).toBeLessThanOrEqual(4_000);
    expect(cut!.stubTokens).toBeGreaterThan(3_600);
    expect(plan.tokensSaved).toBe(30_000 - cut!.stubTokens);
    const shown = pruneStub(cut!);
    expect(shown.startsWith("line 1 of the file")).toBe(true);
    expect(shown.endsWith("line 3000 of the file says something")).toBe(true);
    expect(shown).toContain("[… output of read huge.log cut here to fit the context window: 30,000 tokens in all");
    // Whole lines on both sides of the note.
    expect(cut!.excerpt!.head.endsWith("something")).toBe(true);
    expect(cut!.excerpt!.tail.startsWith("line ")).toBe(true);
    // What the context counts once it is written.
    s.add(pruneEntryInput(plan));
    expect(withPrunedCounts(s.path, prunedOutputs(s.path)).find((item) => item.entry.id === id)!.tokens).toBe(cut!.stubTokens);
    expect(planTruncation(s.path, truncationLimits(8_000, true)).hidden).toEqual([]);
  });

  it("gives the latest batch half of the window, the largest outputs cut to the same level", () => {
    const s = agentRun([]);
    s.assistant({ toolCalls: ["a", "b", "c"].map((id) => toolCall(id, "read", { path: `${id}.ts` })) }, 30);
    s.toolResult("a", file(300), 3_000, "read");
    s.toolResult("b", file(300), 3_000, "read");
    s.toolResult("c", file(50), 500, "read");
    const plan = planTruncation(s.path, truncationLimits(10_000, true));
    // 5 000 for the batch: c keeps its 500, a and b share the rest.
    expect(plan.hidden.map((item) => item.args)).toEqual(["a.ts", "b.ts"]);
    for (const item of plan.hidden) expect(item.stubTokens).toBeLessThanOrEqual(2_250);
  });

  it("leaves outputs the model has answered to the prune rung, unless pruning is off", () => {
    const s = agentRun([{ path: "seen.ts", tokens: 30_000 }]);
    expect(planTruncation(s.path, truncationLimits(8_000, true)).hidden).toEqual([]);
    expect(planTruncation(s.path, truncationLimits(8_000, false)).hidden.map((item) => item.args)).toEqual(["seen.ts"]);
  });

  it("never cuts a character pair in two", () => {
    const s = agentRun([]);
    s.assistant({ toolCalls: [toolCall("e", "bash", { command: "cat emoji" })] }, 30);
    s.toolResult("e", "😀".repeat(5_000), 10_000, "bash");
    const [cut] = planTruncation(s.path, truncationLimits(4_000, true)).hidden;
    expect(cut!.excerpt!.head).toMatch(/^(😀)+$/u);
    expect(cut!.excerpt!.tail).toMatch(/^(😀)+$/u);
  });
});
