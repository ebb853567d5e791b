/**
 * turn/end over real stdio when the model's context overflowed: compact once and retry, give up
 * on a second overflow, ignore another model's overflow, and keep the failed reply stored but
 * out of the context the retry is built from.
 */
import {
  CompactionStatusRequest,
  ContextBuild,
  EntryAppend,
  EntryGet,
  SessionPath,
  type CompactionEntry,
} from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { appendAll, assistant, user } from "./fixtures/e2e.js";
import {
  COMPACTION_OFF,
  overflowReply,
  replyWithUsage,
  sessionWithHistory,
  turnEnd,
  useTurnEndDaemon,
  WINDOW,
} from "./fixtures/turn-end.js";

const { fake, h } = useTurnEndDaemon();

const client = () => h.d.client;
const summariesRequested = () => fake.chatRequests().length;
const pathIds = async (sessionId: string) => (await client().request(SessionPath, { sessionId })).entries.map((entry) => entry.id);

describe("a context overflow", () => {
  it("compacts once with reason overflow and asks to retry; the failed reply stays stored, out of the context", async () => {
    const sessionId = await sessionWithHistory(client(), h.home);
    const lastBefore = (await pathIds(sessionId)).at(-1);
    const answer = await turnEnd(client(), { sessionId, requestId: "overflow-1", assistant: overflowReply() });

    expect(answer).toMatchObject({ followUp: "retry", overflow: { recovered: true }, checkpoint: { status: "committed" } });
    const compaction = answer.checkpoint!.entry as CompactionEntry;
    const failedId = answer.assistantEntryId!;
    const { jobs } = await client().request(CompactionStatusRequest, { sessionId });
    expect(jobs[0]).toMatchObject({ reason: "overflow", state: "committed", entryId: compaction.id });

    // Stored, as a branch of its own beside the compaction.
    const failed = (await client().request(EntryGet, { sessionId, entryId: failedId })).entry;
    expect(failed).toMatchObject({ parentId: lastBefore, message: { role: "assistant", stopReason: "error" } });
    expect(compaction.parentId).toBe(lastBefore);
    expect(await pathIds(sessionId)).not.toContain(failedId);

    for (const format of ["native", "openai-chat"] as const) {
      const context = await client().request(ContextBuild, { sessionId, format });
      expect(JSON.stringify(context.messages)).not.toContain("prompt is too long");
      expect(context.compactionId).toBe(compaction.id);
    }
  });

  it("recognizes a normal stop whose reported prompt is larger than the window", async () => {
    const sessionId = await sessionWithHistory(client(), h.home);
    const silent = replyWithUsage(WINDOW + 500);
    const answer = await turnEnd(client(), { sessionId, assistant: silent });
    expect(answer).toMatchObject({ followUp: "retry", overflow: { recovered: true }, checkpoint: { status: "committed" } });
  });

  it("reports a second overflow before a successful turn as a failure, without compacting again", async () => {
    const sessionId = await sessionWithHistory(client(), h.home);
    expect((await turnEnd(client(), { sessionId, assistant: overflowReply() })).followUp).toBe("retry");
    const summaries = summariesRequested();

    const second = await turnEnd(client(), {
      sessionId,
      assistant: overflowReply("This model's maximum context length is 10000 tokens. However, your messages resulted in 12000 tokens."),
    });
    expect(second).toMatchObject({
      followUp: "none",
      overflow: { recovered: false },
      message: expect.stringContaining("already compacted once"),
    });
    expect(second.checkpoint).toBeUndefined();
    expect(summariesRequested()).toBe(summaries);
    // The failed retry is the record of the failed turn: it stays on the path.
    expect((await pathIds(sessionId)).at(-1)).toBe(second.assistantEntryId);

    // New user input starts over: the next overflow is recovered again (given something to summarize).
    await client().request(EntryAppend, { sessionId, entry: user("Let's try a smaller step.") });
    await appendAll(client(), sessionId, [
      assistant(`Smaller step: ${"reading one file at a time ".repeat(12)}`),
      user(`Go on ${"with the next file ".repeat(12)}`),
    ]);
    const third = await turnEnd(client(), { sessionId, assistant: overflowReply() });
    expect(third).toMatchObject({ followUp: "retry", overflow: { recovered: true }, checkpoint: { status: "committed" } });
  });

  it("from another model than the session's is ignored", async () => {
    const sessionId = await sessionWithHistory(client(), h.home);
    const summaries = summariesRequested();
    const answer = await turnEnd(client(), {
      sessionId,
      assistant: overflowReply(undefined, { provider: "anthropic", model: "claude-sonnet-4" }),
    });
    expect(answer).toMatchObject({ followUp: "none", message: expect.stringContaining("ignored") });
    expect(answer.overflow).toBeUndefined();
    expect(answer.checkpoint).toBeUndefined();
    expect(summariesRequested()).toBe(summaries);
    expect((await pathIds(sessionId)).at(-1)).toBe(answer.assistantEntryId);
  });

  it("is not a rate limit: a throttled reply neither compacts nor retries", async () => {
    const sessionId = await sessionWithHistory(client(), h.home);
    const answer = await turnEnd(client(), { sessionId, assistant: overflowReply("Too many tokens, please wait before trying again.") });
    expect(answer).toEqual({ followUp: "none", assistantEntryId: expect.any(String) });
  });

  it.each(COMPACTION_OFF)("is reported unrecovered when %s", async (why, settings) => {
    const sessionId = await sessionWithHistory(client(), h.project(settings));
    const summaries = summariesRequested();
    const answer = await turnEnd(client(), { sessionId, assistant: overflowReply() });
    expect(answer).toMatchObject({ followUp: "none", overflow: { recovered: false }, message: expect.stringContaining(why) });
    expect(answer.checkpoint).toBeUndefined();
    expect(summariesRequested()).toBe(summaries);
  });
});
