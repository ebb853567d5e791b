import { describe, expect, it } from "vitest";
import { contextDocument, type BuiltContext } from "./context-model.js";
import { report } from "./test-support.js";

const context: BuiltContext = {
  messages: [
    { role: "compactionSummary", summary: "## Goal\nShip JWTs", tokensBefore: 50_000 },
    { role: "user", content: "Run the tests" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Running them, see ```this```." },
        { type: "toolCall", id: "call_1", name: "bash", arguments: { command: "npm test" } },
      ],
    },
    { role: "toolResult", toolCallId: "call_1", toolName: "bash", content: [{ type: "text", text: "[output pruned: bash npm test]" }], isError: false },
    { role: "branchSummary", summary: "Tried redis; dropped it.", fromId: "e9" },
  ],
  model: { provider: "openai", modelId: "gpt-4.1" },
  thinkingLevel: "off",
  compactionId: "c1",
  tokens: 1_234,
  messageTokens: [400, 4, 30, 8, 792],
  pruned: { entryIds: ["t1"], toolCallIds: ["call_1"], tokensSaved: 2_000 },
} as BuiltContext;

const retention = report({ files: [1, 2], requests: [1, 1] }, { files: ["src/db.ts"] });

describe("contextDocument", () => {
  const text = contextDocument({ sessionId: "s1", title: "Refresh\ntokens", leafId: "e42", atCurrentLeaf: true, context, retention, summarizedBy: "Claude Code" });

  it("starts with the facts: leaf, size, model, the summaries it holds, the compaction's retention, what is pruned", () => {
    expect(text.split("\n").slice(0, 12)).toEqual([
      "# What the model sees: Refresh tokens",
      "",
      "- session: `s1`",
      "- leaf: `e42` (the current leaf)",
      "- 5 messages, 1,234 tokens (each message's stored count)",
      "- model: openai/gpt-4.1, thinking off",
      "- holds 1 compaction summary and 1 branch summary",
      "- compaction in force: `c1` (Claude Code's summary): kept 1/2 files, 1/1 requests",
      "- 1 tool output pruned (marked ✂ below): the model sees a one-line stub instead, which saves 2,000 tokens; the stored outputs are unchanged",
      "",
      "What that compaction's summary lost:",
      "",
    ]);
    expect(text).toContain("- files: src/db\\.ts");
  });

  it("gives every message its role, tokens and the text the model reads, verbatim in a fence no backticks inside can close", () => {
    expect(text).toContain("## 1 · compactionSummary · 400 tokens\n\n```text\nThe conversation history before this point was compacted");
    expect(text).toContain("## 3 · assistant · 30 tokens\n\n````text\nRunning them, see ```this```.\n→ bash({\"command\":\"npm test\"})\n````");
    expect(text).toContain("## 4 · toolResult bash · 8 tokens · ✂ pruned");
    expect(text).toContain("## 5 · branchSummary · 792 tokens");
    expect(text.trimEnd().endsWith("Total: 1,234 tokens in 5 messages.")).toBe(true);
  });

  it("says when the context is of another entry than the leaf, or empty", () => {
    const other = contextDocument({ sessionId: "s1", title: "t", leafId: "e7", atCurrentLeaf: false, context });
    expect(other).toContain("- leaf: `e7` (not the current leaf)");
    const empty = contextDocument({
      sessionId: "s1",
      title: "t",
      leafId: null,
      atCurrentLeaf: true,
      context: { messages: [], thinkingLevel: "off", tokens: 0, messageTokens: [] } as BuiltContext,
    });
    expect(empty).toContain("- leaf: none (the session is empty)");
    expect(empty).toContain("- model: none named, thinking off");
    expect(empty).toContain("The context is empty: the model sees no message of this session.");
  });
});
