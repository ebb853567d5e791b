import type { AssistantMessage, CompactionEntry, SessionEntry } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import type { CountedEntry } from "@base-context/core";
import { defaultSettings } from "../settings/index.js";
import { planTurnEnd, type TurnEndFacts } from "./turn-end-plan.js";
import { findTurnReply } from "./turn-end-reply.js";

const T0 = Date.parse("2026-03-01T12:00:00.000Z");
let seq = 0;
const at = (ms: number) => new Date(ms).toISOString();

function entry(body: Record<string, unknown>, tokens: number, timestamp = at(T0)): CountedEntry {
  const id = `e${++seq}`;
  return { entry: { id, parentId: null, timestamp, ...body } as SessionEntry, tokens };
}
const user = (tokens = 100) => entry({ type: "message", message: { role: "user", content: "hi" } }, tokens);
const toolResult = (tokens = 100) =>
  entry({ type: "message", message: { role: "toolResult", toolCallId: "c", toolName: "read", content: [], isError: false } }, tokens);
const reply = (message: Partial<AssistantMessage>, tokens = 50): CountedEntry =>
  entry(
    {
      type: "message",
      message: {
        role: "assistant",
        content: [],
        provider: "openai",
        model: "gpt-4.1",
        stopReason: "stop",
        timestamp: T0 + 60_000,
        ...message,
      },
    },
    tokens,
  );
const usage = (input: number) => ({ input, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: input });
const compaction = (firstKeptEntryId: string, timestampMs = T0 + 30_000, tokens = 200) =>
  entry({ type: "compaction", summary: "s", firstKeptEntryId, tokensBefore: 1000 }, tokens, at(timestampMs));

const OVERFLOW = "prompt is too long: 213462 tokens > 200000 maximum";
const failedReply = (errorMessage = OVERFLOW, extra: Partial<AssistantMessage> = {}) =>
  reply({ stopReason: "error", errorMessage, ...extra });

/** Window 10 000, reserve 1 000: the threshold is 9 000. */
function facts(
  path: CountedEntry[],
  options: { replyLast?: boolean; overflowCompactions?: string[]; settings?: (s: ReturnType<typeof defaultSettings>) => void } = {},
): TurnEndFacts {
  const settings = defaultSettings();
  settings.compaction.reserveTokens = 1000;
  options.settings?.(settings);
  const last = path[path.length - 1]!.entry;
  const replyMessage = last.type === "message" && last.message.role === "assistant" ? last.message : undefined;
  const overflowIds = new Set(options.overflowCompactions ?? []);
  return {
    path,
    ...(options.replyLast !== false && replyMessage ? { reply: { entryId: last.id, message: replyMessage } } : {}),
    sessionModel: { provider: "openai", modelId: "gpt-4.1" },
    contextWindow: 10_000,
    settings,
    isOverflowCompaction: (e: CompactionEntry) => overflowIds.has(e.id),
  };
}

describe("planTurnEnd: threshold", () => {
  it("does nothing below the threshold and reports the estimate (last usage + counted entries after it)", () => {
    expect(planTurnEnd(facts([user(), reply({ usage: usage(8_000) })]))).toEqual({
      action: "none",
      outcome: "completed",
      usage: { tokens: 8_000, threshold: 9_000 },
    });
    const withTrailing = facts([user(), reply({ usage: usage(8_000), stopReason: "toolUse" }), toolResult(700)], { replyLast: false });
    expect(planTurnEnd(withTrailing)).toMatchObject({ action: "none", usage: { tokens: 8_700 } });
  });

  it("does not compact exactly at the threshold: the comparison is strict", () => {
    expect(planTurnEnd(facts([user(), reply({ usage: usage(9_000) })]))).toMatchObject({
      action: "none",
      usage: { tokens: 9_000, threshold: 9_000 },
    });
  });

  it("compacts one token above it", () => {
    expect(planTurnEnd(facts([user(), reply({ usage: usage(9_001) })]))).toEqual({
      action: "compact",
      reason: "threshold",
      usage: { tokens: 9_001, threshold: 9_000 },
    });
  });

  it("sums the stored counts when no reply reports usage (no reply in the turn)", () => {
    expect(planTurnEnd(facts([user(5_000), toolResult(4_500)]))).toMatchObject({
      action: "compact",
      reason: "threshold",
      usage: { tokens: 9_500 },
    });
  });

  it("never compacts for an aborted reply, whatever its usage", () => {
    expect(planTurnEnd(facts([user(), reply({ stopReason: "aborted", usage: usage(50_000) })]))).toMatchObject({
      action: "none",
      outcome: "aborted",
    });
  });

  it("does not compact on a failed reply that is not an overflow (it reports no usage)", () => {
    expect(planTurnEnd(facts([user(9_500), failedReply("Rate limit reached for requests")]))).toEqual({
      action: "none",
      outcome: "completed",
    });
  });

  it("ignores usage that predates the latest compaction", () => {
    const kept = user();
    const path = [user(), kept, compaction(kept.entry.id, T0 + 90_000), reply({ usage: usage(50_000), timestamp: T0 + 60_000 })];
    expect(planTurnEnd(facts(path))).toMatchObject({
      action: "none",
      outcome: "completed",
      note: expect.stringContaining("predates the latest compaction"),
    });
  });

  it("uses usage reported after the latest compaction", () => {
    const kept = user();
    const path = [kept, compaction(kept.entry.id, T0 + 30_000), reply({ usage: usage(9_500), timestamp: T0 + 60_000 })];
    expect(planTurnEnd(facts(path))).toMatchObject({ action: "compact", reason: "threshold" });
  });

  it.each([
    ["compaction.enabled is false", (s: ReturnType<typeof defaultSettings>) => (s.compaction.enabled = false)],
    ['context.mode is "off"', (s: ReturnType<typeof defaultSettings>) => (s.context.mode = "off")],
  ])("does not compact when %s, and says so", (why, settings) => {
    const plan = planTurnEnd(facts([user(), reply({ usage: usage(9_500) })], { settings }));
    expect(plan).toMatchObject({ action: "none", outcome: "completed", note: expect.stringContaining(why) });
  });
});

describe("planTurnEnd: overflow", () => {
  it("compacts for an overflow error of the session's model, naming the failed reply", () => {
    const path = [user(), failedReply()];
    expect(planTurnEnd(facts(path))).toMatchObject({
      action: "compact",
      reason: "overflow",
      failedEntryId: path[1]!.entry.id,
      overflow: { kind: "error", provider: "Anthropic" },
    });
  });

  it("compacts for a normal stop whose reported prompt exceeds the window", () => {
    expect(planTurnEnd(facts([user(), reply({ usage: usage(10_001) })]))).toMatchObject({
      action: "compact",
      reason: "overflow",
      overflow: { kind: "usage" },
    });
  });

  it("ignores an overflow error from another model than the session's", () => {
    const plan = planTurnEnd(facts([user(), failedReply(OVERFLOW, { model: "gpt-4o-mini" })]));
    expect(plan).toMatchObject({
      action: "none",
      outcome: "completed",
      note: expect.stringContaining("openai/gpt-4o-mini, not the session's openai/gpt-4.1"),
    });
  });

  it("counts the overflow when the reply or the session names no model", () => {
    const path = [user(), failedReply(OVERFLOW, { provider: undefined, model: undefined })];
    expect(planTurnEnd(facts(path))).toMatchObject({ action: "compact", reason: "overflow" });
    expect(planTurnEnd({ ...facts([user(), failedReply()]), sessionModel: undefined })).toMatchObject({
      action: "compact",
      reason: "overflow",
    });
  });

  it("reports failure without compacting on a second overflow after an overflow compaction", () => {
    const kept = user();
    const recovery = compaction(kept.entry.id);
    const plan = planTurnEnd(facts([kept, recovery, failedReply()], { overflowCompactions: [recovery.entry.id] }));
    expect(plan).toMatchObject({
      action: "none",
      outcome: "overflow_unrecovered",
      note: expect.stringContaining("already compacted once"),
    });
  });

  it("recovers again once a successful reply or new input came after the overflow compaction", () => {
    const kept = user();
    const recovery = compaction(kept.entry.id);
    const afterSuccess = [kept, recovery, reply({ usage: usage(100) }), failedReply()];
    expect(planTurnEnd(facts(afterSuccess, { overflowCompactions: [recovery.entry.id] }))).toMatchObject({
      action: "compact",
      reason: "overflow",
    });
    const afterInput = [kept, recovery, user(), failedReply()];
    expect(planTurnEnd(facts(afterInput, { overflowCompactions: [recovery.entry.id] }))).toMatchObject({
      action: "compact",
      reason: "overflow",
    });
  });

  it("does not count a manual or threshold compaction as the spent recovery", () => {
    const kept = user();
    expect(planTurnEnd(facts([kept, compaction(kept.entry.id), failedReply()]))).toMatchObject({ action: "compact", reason: "overflow" });
  });

  it("does not compact again for an overflow of a request sent before the latest compaction", () => {
    const kept = user();
    const plan = planTurnEnd(facts([kept, compaction(kept.entry.id, T0 + 90_000), failedReply(OVERFLOW, { timestamp: T0 + 60_000 })]));
    expect(plan).toMatchObject({
      action: "none",
      outcome: "overflow_unrecovered",
      note: expect.stringContaining("before the latest compaction"),
    });
  });

  it.each([
    ["compaction.enabled is false", (s: ReturnType<typeof defaultSettings>) => (s.compaction.enabled = false)],
    ['context.mode is "off"', (s: ReturnType<typeof defaultSettings>) => (s.context.mode = "off")],
  ])("reports the overflow as unrecovered when %s", (why, settings) => {
    expect(planTurnEnd(facts([user(), failedReply()], { settings }))).toMatchObject({
      action: "none",
      outcome: "overflow_unrecovered",
      note: expect.stringContaining(why),
    });
  });
});

describe("findTurnReply", () => {
  it("finds the latest reply when only tool results and metadata follow it", () => {
    const answer = reply({ stopReason: "toolUse" });
    const path = [user(), answer, toolResult(), entry({ type: "label", targetId: "x" }, 0)];
    expect(findTurnReply(path)?.entryId).toBe(answer.entry.id);
  });

  it("finds none when new input came after the last reply", () => {
    expect(findTurnReply([user(), reply({}), user()])).toBeUndefined();
    expect(findTurnReply([user()])).toBeUndefined();
  });
});
