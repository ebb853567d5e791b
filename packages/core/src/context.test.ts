import { describe, expect, it } from "vitest";
import { buildContext } from "./context.js";
import { PathBuilder, toolCall } from "./test-support.js";

describe("buildContext without a compaction", () => {
  it("holds every context-visible entry in order and counts their tokens", () => {
    const s = new PathBuilder();
    s.modelChange("openai", "gpt-x");
    s.user("hello", 10);
    s.assistant({ text: "hi", toolCalls: [toolCall("c1", "read", { path: "a.ts" })] }, 20);
    s.toolResult("c1", "file body", 30);
    s.add({ type: "label", targetId: "e2", label: "start" });
    s.add({ type: "custom", customType: "plugin-state", data: { x: 1 } });
    s.add({ type: "session_info", name: "demo" });
    s.add({ type: "custom_message", customType: "note", content: "injected", display: true, details: { k: 1 } }, 5);
    s.add({ type: "branch_summary", summary: "explored X", fromId: "e3" }, 7);

    const context = buildContext({ path: s.path });
    expect(context.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "custom", "branchSummary"]);
    expect(context.entryIds).toEqual(["e2", "e3", "e4", "e8", "e9"]);
    expect(context.tokens).toBe(10 + 20 + 30 + 5 + 7);
    // Each message's stored count, as `base-context show` prints them: they add up to the total.
    expect(context.messageTokens).toEqual([10, 20, 30, 5, 7]);
    expect(context.compactionId).toBeUndefined();
    expect(context.messages[3]).toEqual({
      role: "custom",
      customType: "note",
      content: "injected",
      display: true,
      details: { k: 1 },
      timestamp: Date.parse(s.path[7]!.entry.timestamp),
    });
    expect(context.messages[4]).toEqual({
      role: "branchSummary",
      summary: "explored X",
      fromId: "e3",
      timestamp: Date.parse(s.path[8]!.entry.timestamp),
    });
  });

  it("omits bash runs excluded from the context, and their tokens", () => {
    const s = new PathBuilder();
    s.bash({ command: "ls", output: "a\nb" }, 4);
    s.bash({ command: "secret", output: "x", excludeFromContext: true }, 9);
    const context = buildContext({ path: s.path });
    expect(context.messages).toHaveLength(1);
    expect(context.tokens).toBe(4);
  });

  it("skips a branch summary with an empty text, as pi does", () => {
    const s = new PathBuilder();
    s.add({ type: "branch_summary", summary: "", fromId: "x" }, 3);
    expect(buildContext({ path: s.path }).messages).toEqual([]);
  });

  it("returns an empty context for an empty path", () => {
    expect(buildContext({ path: [] })).toEqual({
      messages: [],
      entryIds: [],
      messageTokens: [],
      thinkingLevel: "off",
      tokens: 0,
      prunedEntryIds: [],
      prunedToolCallIds: [],
      prunedTokens: 0,
    });
  });
});

describe("buildContext with compactions", () => {
  function compactedSession() {
    const s = new PathBuilder();
    s.user("old question", 100); // e1
    s.assistant({ text: "old answer" }, 100); // e2
    s.user("kept question", 10); // e3
    s.assistant({ text: "kept answer" }, 10); // e4
    s.compaction({ summary: "S1", firstKeptEntryId: "e3", tokensBefore: 220 }, 50); // e5
    s.user("new question", 1); // e6
    return s;
  }

  it("opens with the summary, then the kept entries, then the entries after the compaction", () => {
    const s = compactedSession();
    const context = buildContext({ path: s.path });
    expect(context.messages[0]).toEqual({
      role: "compactionSummary",
      summary: "S1",
      tokensBefore: 220,
      timestamp: Date.parse(s.path[4]!.entry.timestamp),
    });
    expect(context.entryIds).toEqual(["e5", "e3", "e4", "e6"]);
    expect(context.compactionId).toBe("e5");
    expect(context.tokens).toBe(50 + 10 + 10 + 1);
    expect(context.messageTokens).toEqual([50, 10, 10, 1]);
  });

  it("only the latest compaction on the path counts", () => {
    const s = compactedSession();
    s.assistant({ text: "new answer" }, 2); // e7
    s.compaction({ summary: "S2", firstKeptEntryId: "e6", tokensBefore: null }, 60); // e8
    s.user("latest", 3); // e9
    const context = buildContext({ path: s.path });
    expect(context.entryIds).toEqual(["e8", "e6", "e7", "e9"]);
    expect(context.messages[0]).toMatchObject({ role: "compactionSummary", summary: "S2", tokensBefore: null });
    expect(context.tokens).toBe(60 + 1 + 2 + 3);
  });

  it("accepts a suffix of the path starting at the first kept entry", () => {
    const s = compactedSession();
    const context = buildContext({ path: s.path.slice(2) });
    expect(context.entryIds).toEqual(["e5", "e3", "e4", "e6"]);
    expect(context.tokens).toBe(71);
  });

  it("keeps nothing before the compaction when its first kept entry is not on the path", () => {
    const s = new PathBuilder();
    s.user("a", 5);
    s.compaction({ summary: "S", firstKeptEntryId: "missing", tokensBefore: 5 }, 8);
    s.user("b", 2);
    expect(buildContext({ path: s.path }).entryIds).toEqual(["e2", "e3"]);
  });
});

describe("buildContext model and thinking level", () => {
  it("defaults the thinking level to off and leaves the model unset", () => {
    const s = new PathBuilder();
    s.user("x");
    const context = buildContext({ path: s.path });
    expect(context.thinkingLevel).toBe("off");
    expect(context.model).toBeUndefined();
  });

  it("takes the latest model_change or assistant model, and the latest thinking level", () => {
    const s = new PathBuilder();
    s.thinkingLevel("low");
    s.modelChange("openai", "a");
    s.user("x");
    s.assistant({ text: "y", provider: "anthropic", model: "b" });
    s.thinkingLevel("high");
    let context = buildContext({ path: s.path });
    expect(context.model).toEqual({ provider: "anthropic", modelId: "b" });
    expect(context.thinkingLevel).toBe("high");
    s.modelChange("openai", "c");
    context = buildContext({ path: s.path });
    expect(context.model).toEqual({ provider: "openai", modelId: "c" });
  });

  it("uses the given latest metadata when it lies before the suffix", () => {
    const s = new PathBuilder();
    s.modelChange("openai", "a"); // e1
    s.thinkingLevel("medium"); // e2
    s.user("x"); // e3
    const model = s.path[0]!.entry;
    const thinking = s.path[1]!.entry;
    if (model.type !== "model_change" || thinking.type !== "thinking_level_change") throw new Error("fixture");
    const context = buildContext({ path: s.path.slice(2), latestModelChange: model, latestThinkingLevelChange: thinking });
    expect(context.model).toEqual({ provider: "openai", modelId: "a" });
    expect(context.thinkingLevel).toBe("medium");
  });

  it("prefers the given latest model entry, which may be an assistant reply after the last model_change", () => {
    const s = new PathBuilder();
    s.modelChange("openai", "a"); // e1
    s.assistant({ text: "y", provider: "anthropic", model: "b" }); // e2
    s.user("x"); // e3
    const [modelChange, reply] = [s.path[0]!.entry, s.path[1]!.entry];
    if (modelChange.type !== "model_change" || reply.type !== "message") throw new Error("fixture");
    const context = buildContext({ path: s.path.slice(2), latestModelChange: modelChange, latestModelEntry: reply });
    expect(context.model).toEqual({ provider: "anthropic", modelId: "b" });
  });
});
