/**
 * context/build and context/usage: what the LLM sees for a path, with and without compactions,
 * with branch summaries, in native and OpenAI chat form, and what it costs in tokens.
 */
import {
  ContextBuild,
  ContextUsage,
  EntryAppend,
  SessionBranch,
  SessionPath,
  type EntryInput,
  type SessionEntry,
} from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { useDaemon } from "./support/daemon.js";
import { appendAll, assistant, createSession, messageOf, rpcError, tokensOf, toolResult, user } from "./fixtures/e2e.js";

const d = useDaemon();

const COMPACTION_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";

const compaction = (summary: string, firstKeptEntryId: string, tokensBefore = 50_000): EntryInput => ({
  type: "compaction",
  summary,
  firstKeptEntryId,
  tokensBefore,
  details: { readFiles: ["src/a.ts"], modifiedFiles: [] },
});

async function build(sessionId: string, extra: { leafId?: string | null; format?: "native" | "openai-chat" } = {}) {
  return d.client.request(ContextBuild, { sessionId, ...extra });
}

describe("context/build without a compaction", () => {
  it("holds every message entry of the path in order, custom messages as custom, and no metadata entries", async () => {
    const sessionId = await createSession(d.client);
    const entries = await appendAll(d.client, sessionId, [
      { type: "model_change", provider: "openai", modelId: "gpt-4.1" },
      user("Read a.ts please"),
      assistant("Reading.", { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "a.ts" } }] }),
      toolResult("call_1", "read", "export const a = 1;"),
      { type: "custom", customType: "plugin-state", data: { n: 1 } },
      { type: "custom_message", customType: "reminder", content: "Keep it short.", display: true, details: { why: "policy" } },
      { type: "session_info", name: "reading" },
      {
        type: "message",
        message: { role: "bashExecution", command: "ls", output: "a.ts", exitCode: 0, cancelled: false, truncated: false, timestamp: 5 },
      },
      {
        type: "message",
        message: {
          role: "bashExecution",
          command: "cat .env",
          output: "SECRET",
          exitCode: 0,
          cancelled: false,
          truncated: false,
          excludeFromContext: true,
          timestamp: 6,
        },
      },
      assistant("It exports a."),
    ]);
    const [, u1, a1, t1, , cm, , bash, , a2] = entries;
    const context = await build(sessionId);
    expect(context.messages).toEqual([u1, a1, t1, cm, bash, a2].map((e) => messageOf(e!)));
    expect(context.messages[3]).toMatchObject({ role: "custom", customType: "reminder", content: "Keep it short.", display: true });
    expect(context.compactionId).toBeUndefined();
    // tokens: the stored counts of exactly the entries the context holds.
    expect(context.tokens).toBe(await tokensOf(d.client, sessionId, [u1, a1, t1, cm, bash, a2].map((e) => e!.id)));
  });

  it("is empty for an empty session and for leafId null, with thinking level off and no model", async () => {
    const sessionId = await createSession(d.client);
    expect(await build(sessionId)).toEqual({ messages: [], thinkingLevel: "off", tokens: 0 });
    await appendAll(d.client, sessionId, [user("x")]);
    expect(await build(sessionId, { leafId: null })).toEqual({ messages: [], thinkingLevel: "off", tokens: 0 });
  });

  it("builds the context of another leaf with leafId, and answers an unknown leafId with entry_not_found", async () => {
    const sessionId = await createSession(d.client);
    const [u1, a1, u2] = await appendAll(d.client, sessionId, [user("1"), assistant("2"), user("3")]);
    const context = await build(sessionId, { leafId: a1!.id });
    expect(context.messages).toEqual([u1, a1].map((e) => messageOf(e!)));
    expect((await build(sessionId)).messages).toEqual([u1, a1, u2].map((e) => messageOf(e!)));
    expect((await rpcError(build(sessionId, { leafId: "0badc0de" }))).data?.code).toBe("entry_not_found");
  });

  it("reports the latest model and thinking level on the path; an assistant reply names the model that answered", async () => {
    const sessionId = await createSession(d.client);
    await appendAll(d.client, sessionId, [
      { type: "model_change", provider: "openai", modelId: "gpt-4.1" },
      { type: "thinking_level_change", thinkingLevel: "low" },
      user("1"),
    ]);
    expect(await build(sessionId)).toMatchObject({ model: { provider: "openai", modelId: "gpt-4.1" }, thinkingLevel: "low" });
    await appendAll(d.client, sessionId, [assistant("2", { provider: "anthropic", model: "claude-sonnet-4-5" })]);
    expect((await build(sessionId)).model).toEqual({ provider: "anthropic", modelId: "claude-sonnet-4-5" });
    await appendAll(d.client, sessionId, [
      { type: "model_change", provider: "openai", modelId: "gpt-5" },
      { type: "thinking_level_change", thinkingLevel: "high" },
    ]);
    expect(await build(sessionId)).toMatchObject({ model: { provider: "openai", modelId: "gpt-5" }, thinkingLevel: "high" });
  });
});

describe("context/build with compactions", () => {
  /** u1 a1 u2 a2 u3 a3, then a compaction keeping from u2, then u4 a4. */
  async function compacted() {
    const sessionId = await createSession(d.client);
    const before = await appendAll(d.client, sessionId, [
      user("u1"),
      assistant("a1"),
      user("u2"),
      assistant("a2"),
      user("u3"),
      assistant("a3"),
    ]);
    const [c1] = await appendAll(d.client, sessionId, [compaction("Summary one.", before[2]!.id)]);
    const after = await appendAll(d.client, sessionId, [user("u4"), assistant("a4")]);
    return { sessionId, before, c1: c1!, after };
  }

  it("starts with the compaction summary, then the kept entries from firstKeptEntryId, then what follows", async () => {
    const { sessionId, before, c1, after } = await compacted();
    const context = await build(sessionId);
    expect(context.messages[0]).toEqual({
      role: "compactionSummary",
      summary: "Summary one.",
      tokensBefore: 50_000,
      timestamp: Date.parse(c1.timestamp),
    });
    expect(context.messages).toEqual([c1, ...before.slice(2), ...after].map(messageOf));
    expect(context.compactionId).toBe(c1.id);
    expect(context.tokens).toBe(await tokensOf(d.client, sessionId, [c1, ...before.slice(2), ...after].map((e) => e.id)));
  });

  it("gives each message's stored token count with messageTokens: true (native only), adding up to the total", async () => {
    const { sessionId, before, c1, after } = await compacted();
    const kept = [c1, ...before.slice(2), ...after];
    const context = await d.client.request(ContextBuild, { sessionId, messageTokens: true });
    const each = [];
    for (const entry of kept) each.push(await tokensOf(d.client, sessionId, [entry.id]));
    expect(context.messageTokens).toEqual(each);
    expect(context.messageTokens!.reduce((sum, n) => sum + n, 0)).toBe(context.tokens);
    expect((await build(sessionId)).messageTokens).toBeUndefined();
    expect((await d.client.request(ContextBuild, { sessionId, messageTokens: true, format: "openai-chat" })).messageTokens).toBeUndefined();
  });

  it("counts only the latest compaction on the path", async () => {
    const { sessionId, before, after } = await compacted();
    const [c2] = await appendAll(d.client, sessionId, [compaction("Summary two.", after[0]!.id)]);
    const [u5] = await appendAll(d.client, sessionId, [user("u5")]);
    const context = await build(sessionId);
    expect(context.compactionId).toBe(c2!.id);
    expect(context.messages).toEqual([c2!, ...after, u5!].map(messageOf));
    expect(context.messages.filter((m) => m.role === "compactionSummary")).toHaveLength(1);
    expect(context.tokens).toBe(await tokensOf(d.client, sessionId, [c2!, ...after, u5!].map((e) => e.id)));
    expect(JSON.stringify(context.messages)).not.toContain("Summary one.");
    expect(before).toHaveLength(6);
  });

  it("skips an older compaction that lies inside the latest one's kept range", async () => {
    const { sessionId, before, c1, after } = await compacted();
    // The second compaction keeps from u3, which is before the first compaction.
    const [c2] = await appendAll(d.client, sessionId, [compaction("Summary two.", before[4]!.id)]);
    const context = await build(sessionId);
    expect(context.messages).toEqual([c2!, before[4]!, before[5]!, ...after].map(messageOf));
    expect(context.tokens).toBe(await tokensOf(d.client, sessionId, [c2!, before[4]!, before[5]!, ...after].map((e) => e.id)));
    expect(c1.type).toBe("compaction");
  });

  it("keeps only the compaction's parent when firstKeptEntryId names it", async () => {
    const sessionId = await createSession(d.client);
    const entries = await appendAll(d.client, sessionId, [user("u1"), assistant("a1"), user("u2")]);
    const [c] = await appendAll(d.client, sessionId, [compaction("S", entries[2]!.id)]);
    expect((await build(sessionId)).messages).toEqual([c!, entries[2]!].map(messageOf));
  });

  it("does not apply a compaction to a leaf on another branch", async () => {
    const { sessionId, before } = await compacted();
    await d.client.request(SessionBranch, { sessionId, entryId: before[3]!.id });
    const [other] = await appendAll(d.client, sessionId, [user("u3 elsewhere")]);
    const context = await build(sessionId);
    expect(context.compactionId).toBeUndefined();
    expect(context.messages).toEqual([...before.slice(0, 4), other!].map(messageOf));
  });

  it("takes the model and thinking level from entries before the kept range, as pi does", async () => {
    const sessionId = await createSession(d.client);
    const entries = await appendAll(d.client, sessionId, [
      { type: "model_change", provider: "openai", modelId: "gpt-4.1" },
      { type: "thinking_level_change", thinkingLevel: "medium" },
      user("u1"),
      assistant("a1", { provider: "anthropic", model: "claude-sonnet-4-5" }),
      user("u2"),
    ]);
    await appendAll(d.client, sessionId, [compaction("S", entries[4]!.id), user("u3")]);
    const context = await build(sessionId);
    expect(context.thinkingLevel).toBe("medium");
    // The reply by claude came after the last model_change: pi's context says claude.
    expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-sonnet-4-5" });
  });
});

describe("context/build with branch summaries", () => {
  it("puts a branch summary in the context as a branchSummary message where it lies on the path", async () => {
    const sessionId = await createSession(d.client);
    const [u1, a1, abandoned] = await appendAll(d.client, sessionId, [user("u1"), assistant("a1"), user("try X")]);
    await d.client.request(SessionBranch, { sessionId, entryId: a1!.id });
    const [bs, u2] = await appendAll(d.client, sessionId, [
      { type: "branch_summary", fromId: abandoned!.id, summary: "Tried X; it failed because of Y." },
      user("try Z"),
    ]);
    const context = await build(sessionId);
    expect(context.messages).toEqual([u1, a1, bs, u2].map((e) => messageOf(e!)));
    expect(context.messages[2]).toEqual({
      role: "branchSummary",
      summary: "Tried X; it failed because of Y.",
      fromId: abandoned!.id,
      timestamp: Date.parse(bs!.timestamp),
    });
    expect(context.tokens).toBe(await tokensOf(d.client, sessionId, [u1, a1, bs, u2].map((e) => e!.id)));

    const chat = await build(sessionId, { format: "openai-chat" });
    expect(chat.messages[2]).toEqual({ role: "user", content: `${BRANCH_PREFIX}Tried X; it failed because of Y.</summary>` });
  });

  it("leaves out a branch summary with an empty summary", async () => {
    const sessionId = await createSession(d.client);
    const [u1, a1] = await appendAll(d.client, sessionId, [user("u1"), assistant("a1")]);
    const [, u2] = await appendAll(d.client, sessionId, [{ type: "branch_summary", fromId: a1!.id, summary: "" }, user("u2")]);
    expect((await build(sessionId)).messages).toEqual([u1, a1, u2].map((e) => messageOf(e!)));
  });
});

describe("context/build in openai-chat format", () => {
  it("converts tool calls to tool_calls, tool results to role tool, summaries and custom messages to user messages", async () => {
    const sessionId = await createSession(d.client);
    await appendAll(d.client, sessionId, [user("old stuff"), user("first kept")]);
    const path = await d.client.request(SessionPath, { sessionId });
    const firstKept = path.entries[1]!.id;
    await appendAll(d.client, sessionId, [
      compaction("We refactored auth.", firstKept),
      assistant("Let me check.", {
        thinking: "hidden reasoning",
        toolCalls: [
          { id: "call_a", name: "read", arguments: { path: "src/auth.ts" } },
          { id: "call_b", name: "bash", arguments: { command: "npm test" } },
        ],
      }),
      toolResult("call_a", "read", "export function login() {}"),
      toolResult("call_b", "bash", "1 failing", true),
      { type: "custom_message", customType: "reminder", content: [{ type: "text", text: "Tests must pass." }], display: false },
      {
        type: "message",
        message: {
          role: "bashExecution",
          command: "git status",
          output: "",
          exitCode: 2,
          cancelled: false,
          truncated: false,
          timestamp: 9,
        },
      },
      assistant("Fixed."),
    ]);
    const chat = await build(sessionId, { format: "openai-chat" });
    expect(chat.messages).toEqual([
      { role: "user", content: `${COMPACTION_PREFIX}We refactored auth.\n</summary>` },
      { role: "user", content: "first kept" },
      {
        role: "assistant",
        content: "Let me check.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "read", arguments: JSON.stringify({ path: "src/auth.ts" }) } },
          { id: "call_b", type: "function", function: { name: "bash", arguments: JSON.stringify({ command: "npm test" }) } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "export function login() {}" },
      { role: "tool", tool_call_id: "call_b", content: "1 failing" },
      { role: "user", content: "Tests must pass." },
      { role: "user", content: "Ran `git status`\n(no output)\n\nCommand exited with code 2" },
      { role: "assistant", content: "Fixed." },
    ]);
    expect(JSON.stringify(chat.messages)).not.toContain("hidden reasoning");
    expect(JSON.stringify(chat.messages)).not.toContain("old stuff");
    // Same context, same token count, whatever the format.
    const native = await build(sessionId);
    expect(chat.tokens).toBe(native.tokens);
    expect(chat.compactionId).toBe(native.compactionId);
  });

  it("gives an assistant message with only tool calls null content, and does not replay an aborted reply", async () => {
    const sessionId = await createSession(d.client);
    await appendAll(d.client, sessionId, [
      user("go"),
      assistant("partial answ", { stopReason: "aborted" }),
      user("go again"),
      assistant("", { toolCalls: [{ id: "c1", name: "ls", arguments: {} }] }),
      toolResult("c1", "ls", "a b"),
    ]);
    const chat = await build(sessionId, { format: "openai-chat" });
    expect(chat.messages).toEqual([
      { role: "user", content: "go" },
      { role: "user", content: "go again" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "a b" },
    ]);
  });
});

describe("context/usage", () => {
  it("without a usage report, estimates the context as the sum of its entries' token counts", async () => {
    const sessionId = await createSession(d.client);
    await appendAll(d.client, sessionId, [user("one two three"), assistant("four five")]);
    const { tokens } = await build(sessionId);
    const usage = await d.client.request(ContextUsage, { sessionId, contextWindow: 128_000 });
    expect(usage).toEqual({
      tokens,
      usageTokens: null,
      trailingTokens: tokens,
      threshold: 128_000 - 16_384,
      shouldCompact: false,
      // The kept part is a quarter of the window the client gave.
      settings: { reserveTokens: 16_384, keepRecentTokens: 32_000 },
    });
  });

  it("uses the last assistant usage plus the counts of entries after it, and says when to compact", async () => {
    const sessionId = await createSession(d.client);
    const usage = { input: 20_000, output: 500, cacheRead: 0, cacheWrite: 0, totalTokens: 20_500 };
    const entries = await appendAll(d.client, sessionId, [user("q"), assistant("a", { usage }), user("follow-up question")]);
    const trailing = await tokensOf(d.client, sessionId, [entries[2]!.id]);
    const roomy = await d.client.request(ContextUsage, { sessionId, contextWindow: 200_000 });
    expect(roomy).toEqual({
      tokens: 20_500 + trailing,
      usageTokens: 20_500,
      trailingTokens: trailing,
      threshold: 200_000 - 16_384,
      shouldCompact: false,
      settings: { reserveTokens: 16_384, keepRecentTokens: 50_000 },
    });
    // The default reserve, capped at a quarter of a 24k window.
    const tight = await d.client.request(ContextUsage, { sessionId, contextWindow: 24_000 });
    expect(tight).toMatchObject({ tokens: 20_500 + trailing, threshold: 24_000 - 6_000, shouldCompact: true });
    expect(tight.reason).toEqual(expect.any(String));
  });

  it("ignores a usage report from before the latest compaction", async () => {
    const sessionId = await createSession(d.client);
    const usage = { input: 90_000, output: 500, cacheRead: 0, cacheWrite: 0, totalTokens: 90_500 };
    const entries = await appendAll(d.client, sessionId, [user("q"), assistant("a", { usage }), user("q2")]);
    await appendAll(d.client, sessionId, [compaction("S", entries[2]!.id), user("q3")]);
    const { tokens } = await build(sessionId);
    const report = await d.client.request(ContextUsage, { sessionId, contextWindow: 100_000 });
    expect(report).toMatchObject({ tokens, usageTokens: null, trailingTokens: tokens, shouldCompact: false });
  });

  it("refuses a non-positive context window with -32602", async () => {
    const sessionId = await createSession(d.client);
    expect((await rpcError(d.client.request(ContextUsage, { sessionId, contextWindow: 0 }))).code).toBe(-32602);
  });
});

describe("tokens", () => {
  it("entry/append reports the same count that context/build sums", async () => {
    const sessionId = await createSession(d.client);
    let sum = 0;
    for (const text of ["short", "a somewhat longer message with more words in it", "ünïcödé and emoji 🎉"]) {
      const { tokens } = await d.client.request(EntryAppend, { sessionId, entry: user(text) });
      expect(tokens).toBeGreaterThan(0);
      sum += tokens;
    }
    expect((await build(sessionId)).tokens).toBe(sum);
    const entries: SessionEntry[] = (await d.client.request(SessionPath, { sessionId })).entries;
    expect(entries).toHaveLength(3);
  });
});
