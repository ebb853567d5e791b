/**
 * turn/end over real stdio, at the compaction threshold: when a turn boundary compacts, what it
 * answers about following up, what turns it off, and a retried requestId.
 */
import { CompactionStatusRequest, ContextBuild, SessionGet, type CompactionEntry } from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { COMPACTION_OFF, replyWithUsage, sessionWithHistory, THRESHOLD, turnEnd, useTurnEndDaemon } from "./fixtures/turn-end.js";

const { fake, h } = useTurnEndDaemon();

const client = () => h.d.client;
const newSession = () => sessionWithHistory(client(), h.home);
const summariesRequested = () => fake.chatRequests().length;
const live = { results: [{ terminate: false }] };
const terminating = { results: [{ terminate: true }, { terminate: true }] };

describe("below the threshold", () => {
  it("stores the reply, does not compact, and follows the tool batch", async () => {
    const sessionId = await newSession();
    const before = summariesRequested();
    const going = await turnEnd(client(), { sessionId, assistant: replyWithUsage(8_000, { stopReason: "toolUse" }), toolBatch: live });
    expect(going).toEqual({ followUp: "continue", assistantEntryId: expect.any(String), usage: { tokens: 8_000, threshold: THRESHOLD } });
    expect((await client().request(SessionGet, { sessionId })).leafId).toBe(going.assistantEntryId);

    const done = await turnEnd(client(), { sessionId, assistant: replyWithUsage(8_100) });
    expect(done).toMatchObject({ followUp: "none" });
    expect(done.checkpoint).toBeUndefined();
    expect(summariesRequested()).toBe(before);
  });

  it("asks for no follow-up when every tool result requested termination", async () => {
    const sessionId = await newSession();
    const answer = await turnEnd(client(), {
      sessionId,
      assistant: replyWithUsage(100, { stopReason: "toolUse" }),
      toolBatch: terminating,
    });
    expect(answer.followUp).toBe("none");
  });
});

describe("exactly at the threshold", () => {
  it("does not compact: the comparison is strict", async () => {
    const sessionId = await newSession();
    const before = summariesRequested();
    const answer = await turnEnd(client(), { sessionId, assistant: replyWithUsage(THRESHOLD) });
    expect(answer).toMatchObject({ followUp: "none", usage: { tokens: THRESHOLD, threshold: THRESHOLD } });
    expect(answer.checkpoint).toBeUndefined();
    expect(summariesRequested()).toBe(before);
  });
});

describe("above the threshold", () => {
  it("compacts with reason threshold after the reply, and the checkpoint alone asks for no follow-up", async () => {
    const sessionId = await newSession();
    const before = summariesRequested();
    const answer = await turnEnd(client(), { sessionId, assistant: replyWithUsage(THRESHOLD + 1) });

    expect(answer.followUp).toBe("none");
    expect(answer.checkpoint).toMatchObject({ status: "committed", summarizer: "openai:fake-summarizer" });
    const compaction = answer.checkpoint!.entry as CompactionEntry;
    expect(compaction).toMatchObject({ type: "compaction", parentId: answer.assistantEntryId });
    expect(summariesRequested()).toBeGreaterThan(before);
    const { jobs } = await client().request(CompactionStatusRequest, { sessionId });
    expect(jobs[0]).toMatchObject({ reason: "threshold", state: "committed", entryId: compaction.id });

    const context = await client().request(ContextBuild, { sessionId });
    expect(context.compactionId).toBe(compaction.id);
    expect(context.messages[0]).toMatchObject({ role: "compactionSummary", summary: expect.stringContaining("Fake summary of") });
  });

  it("asks to continue when inputs are queued: they go first", async () => {
    const sessionId = await newSession();
    const answer = await turnEnd(client(), { sessionId, assistant: replyWithUsage(9_500), queuedInputs: 2 });
    expect(answer).toMatchObject({ followUp: "continue", checkpoint: { status: "committed" } });
  });

  it("asks to continue when the tool batch did, as it would have without the checkpoint", async () => {
    const sessionId = await newSession();
    const answer = await turnEnd(client(), { sessionId, assistant: replyWithUsage(9_500, { stopReason: "toolUse" }), toolBatch: live });
    expect(answer).toMatchObject({ followUp: "continue", checkpoint: { status: "committed" } });
  });

  it("asks for none when every tool result requested termination", async () => {
    const sessionId = await newSession();
    const answer = await turnEnd(client(), {
      sessionId,
      assistant: replyWithUsage(9_500, { stopReason: "toolUse" }),
      toolBatch: terminating,
    });
    expect(answer).toMatchObject({ followUp: "none", checkpoint: { status: "committed" } });
  });
});

describe("turns that never compact", () => {
  it("an aborted turn: no compaction and no follow-up, whatever its usage, batch or queue", async () => {
    const sessionId = await newSession();
    const before = summariesRequested();
    const answer = await turnEnd(client(), {
      sessionId,
      assistant: replyWithUsage(50_000, { stopReason: "aborted" }),
      toolBatch: live,
      queuedInputs: 3,
    });
    expect(answer).toMatchObject({ followUp: "none", message: expect.stringContaining("aborted") });
    expect(answer.checkpoint).toBeUndefined();
    expect(summariesRequested()).toBe(before);
  });

  it("a reply whose usage predates the latest compaction", async () => {
    const sessionId = await newSession();
    const first = await turnEnd(client(), { sessionId, assistant: replyWithUsage(9_500) });
    const compactedAt = Date.parse(first.checkpoint!.entry!.timestamp);
    const before = summariesRequested();

    // Sent before the compaction, finished after it: its usage measured the old context.
    const late = replyWithUsage(9_800, { timestamp: compactedAt - 1_000 });
    const answer = await turnEnd(client(), { sessionId, assistant: late });
    expect(answer).toMatchObject({ followUp: "none", message: expect.stringContaining("predates the latest compaction") });
    expect(answer.checkpoint).toBeUndefined();
    expect(summariesRequested()).toBe(before);
  });

  it.each(COMPACTION_OFF)("above the threshold when %s", async (why, settings) => {
    const sessionId = await sessionWithHistory(client(), h.project(settings));
    const before = summariesRequested();
    const answer = await turnEnd(client(), { sessionId, assistant: replyWithUsage(9_500, { stopReason: "toolUse" }), toolBatch: live });
    expect(answer).toMatchObject({ followUp: "continue", message: expect.stringContaining(why), usage: { tokens: 9_500 } });
    expect(answer.checkpoint).toBeUndefined();
    expect(summariesRequested()).toBe(before);
  });
});

describe("a lost reply", () => {
  it("followed by a retry with the same requestId gets the first answer: one reply stored, one summary", async () => {
    const sessionId = await newSession();
    const first = await turnEnd(client(), { sessionId, requestId: "turn-7", assistant: replyWithUsage(9_500), toolBatch: live });
    expect(first.checkpoint?.status).toBe("committed");
    const entries = (await client().request(SessionGet, { sessionId })).entryCount;
    const summaries = summariesRequested();

    const retry = await turnEnd(client(), { sessionId, requestId: "turn-7", assistant: replyWithUsage(9_500), toolBatch: live });
    expect(retry).toEqual(first);
    expect((await client().request(SessionGet, { sessionId })).entryCount).toBe(entries);
    expect(summariesRequested()).toBe(summaries);
  });
});
