import { CompactionDidEnd, type AssistantMessage, type CompactionEntry } from "@base-context/protocol";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { buildContext } from "@base-context/core";
import type { CompactionRunContext } from "./reporter.js";
import { CompactionService } from "./service.js";
import { harness, type Harness } from "./test-support.js";
import { TurnEndService, type TurnEndParams } from "./turn-end.js";

let h: Harness;
let turns: TurnEndService;
beforeEach(async () => {
  h = await harness();
  turns = new TurnEndService({ sessions: h.sessions, compaction: h.service, settings: { forSession: () => h.settings } });
});
afterEach(async () => {
  await h.cleanup();
});

/** The harness's window: threshold = 10 000 − reserveTokens 1 000 = 9 000. */
const WINDOW = 10_000;
const reply = (extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text: "done" }],
  provider: "openai",
  model: "gpt-4.1",
  stopReason: "stop",
  timestamp: Date.now() + 60_000,
  ...extra,
});
const withUsage = (input: number, extra: Partial<AssistantMessage> = {}) =>
  reply({ usage: { input, output: 0, cacheRead: 0, cacheWrite: 0 }, ...extra });
const overflowReply = () => reply({ stopReason: "error", errorMessage: "prompt is too long: 213462 tokens > 200000 maximum", content: [] });
const end = (extra: Partial<TurnEndParams> = {}) => turns.end({ sessionId: h.sessionId, contextWindow: WINDOW, ...extra });
const leaf = () => h.store.requireSession(h.sessionId).leafId;
const pathIds = () => h.store.path(h.sessionId, leaf()!).map((stored) => stored.entry.id);

describe("turn/end at the threshold", () => {
  it("appends the reply and answers by the tool batch when below the threshold", async () => {
    await h.conversation(3);
    const answer = await end({ assistant: withUsage(8_000, { stopReason: "toolUse" }), toolBatch: { results: [{ terminate: false }] } });
    expect(answer).toEqual({ followUp: "continue", assistantEntryId: leaf(), usage: { tokens: 8_000, threshold: 9_000 } });
    expect(h.summarizer.requests).toHaveLength(0);
  });

  it("compacts above it with reason threshold, and the checkpoint alone does not ask to continue", async () => {
    await h.conversation(4);
    const answer = await end({ assistant: withUsage(9_500) });
    expect(answer.followUp).toBe("none");
    expect(answer.checkpoint).toMatchObject({ status: "committed", entry: { type: "compaction", parentId: answer.assistantEntryId } });
    // The checkpoint carries its retention report, as compaction/run does.
    expect(answer.checkpoint!.retention).toBeDefined();
    expect(answer.checkpoint!.retention).toEqual(
      (answer.checkpoint!.entry as CompactionEntry & { details: { retention: unknown } }).details.retention,
    );
    expect(h.service.status({ sessionId: h.sessionId }).jobs[0]).toMatchObject({ reason: "threshold", state: "committed" });
  });
});

describe("turn/end after a context overflow", () => {
  it("sets the failed reply aside, compacts with reason overflow and asks to retry", async () => {
    await h.conversation(4);
    const parentOfReply = leaf();
    const answer = await end({ assistant: overflowReply() });

    expect(answer).toMatchObject({ followUp: "retry", overflow: { recovered: true }, checkpoint: { status: "committed" } });
    const compaction = answer.checkpoint!.entry as CompactionEntry;
    // Stored, but on a branch of its own: the compaction is its sibling and the new leaf.
    expect(h.store.getEntry(h.sessionId, answer.assistantEntryId!)!.entry.parentId).toBe(parentOfReply);
    expect(compaction.parentId).toBe(parentOfReply);
    expect(leaf()).toBe(compaction.id);
    expect(pathIds()).not.toContain(answer.assistantEntryId);
    const context = await h.sessions.getContextPath(h.sessionId);
    expect(buildContext({ path: context.entries }).entryIds).not.toContain(answer.assistantEntryId);
    expect(h.service.status({ sessionId: h.sessionId }).jobs[0]).toMatchObject({ reason: "overflow", state: "committed" });
  });

  it("reports a second overflow before a successful turn as a failure, without compacting again — also after a restart", async () => {
    await h.conversation(4);
    expect((await end({ assistant: overflowReply() })).followUp).toBe("retry");
    const summaries = h.summarizer.requests.length;

    const second = await end({ assistant: overflowReply() });
    expect(second).toMatchObject({
      followUp: "none",
      overflow: { recovered: false },
      message: expect.stringContaining("already compacted once"),
    });
    expect(second.checkpoint).toBeUndefined();
    // The failed retry stays on the path: it is the record of the failed turn.
    expect(leaf()).toBe(second.assistantEntryId);

    const restarted = new TurnEndService({
      sessions: h.sessions,
      compaction: new CompactionService({
        sessions: h.sessions,
        settings: { forSession: () => h.settings },
        summarizerFor: () => h.summarizer,
      }),
      settings: { forSession: () => h.settings },
    });
    const third = await restarted.end({ sessionId: h.sessionId, contextWindow: WINDOW, assistant: overflowReply() });
    expect(third).toMatchObject({ followUp: "none", overflow: { recovered: false } });
    expect(h.summarizer.requests).toHaveLength(summaries);
  });

  it("puts the failed reply back on the path when there is nothing to compact", async () => {
    await h.conversation(1);
    const answer = await end({ assistant: overflowReply() });
    expect(answer).toMatchObject({ followUp: "none", overflow: { recovered: false }, checkpoint: { status: "nothing_to_compact" } });
    expect(leaf()).toBe(answer.assistantEntryId);
  });

  it("finds the reply on the path when the client stored it itself", async () => {
    await h.conversation(4);
    const replyId = await h.append({ type: "message", message: overflowReply() });
    const answer = await end();
    expect(answer).toMatchObject({ followUp: "retry", checkpoint: { status: "committed" } });
    expect(answer.assistantEntryId).toBeUndefined();
    expect(pathIds()).not.toContain(replyId);
  });
});

describe("turn/end requestId", () => {
  it("returns the first answer to a retry: the reply is stored once and nothing is summarized again", async () => {
    await h.conversation(4);
    const first = await end({ requestId: "t1", assistant: withUsage(9_500) });
    const entries = h.entryCount();
    const again = await end({ requestId: "t1", assistant: withUsage(9_500) });
    expect(again).toEqual(first);
    expect(h.entryCount()).toBe(entries);
    expect(h.summarizer.requests).toHaveLength(1);
  });

  it("lets a retry sent while the first attempt runs join it", async () => {
    await h.conversation(4);
    h.summarizer.mode = "hold";
    const first = end({ requestId: "t2", assistant: withUsage(9_500) });
    await vi.waitFor(() => expect(h.summarizer.holding).toBe(1));
    const retry = end({ requestId: "t2", assistant: withUsage(9_500) });
    h.summarizer.release();
    expect(await retry).toEqual(await first);
    expect(h.summarizer.requests).toHaveLength(1);
  });
});

describe("a checkpoint followed by a later failure", () => {
  it("is reported as committed-then-failed when notifying its end fails, and is neither repeated nor resumed", async () => {
    await h.conversation(4);
    const notify: CompactionRunContext["notify"] = (decl) => {
      if (decl.method === CompactionDidEnd.method) throw new Error("the connection is gone");
    };
    const answer = await turns.end(
      {
        sessionId: h.sessionId,
        contextWindow: WINDOW,
        requestId: "t3",
        assistant: withUsage(9_500),
        toolBatch: { results: [{ terminate: false }] },
      },
      { notify },
    );
    expect(answer).toMatchObject({
      followUp: "none",
      checkpoint: { status: "committed" },
      failedAfterCheckpoint: "sending compaction/didEnd failed: the connection is gone",
    });

    const retry = await end({ requestId: "t3", assistant: withUsage(9_500), toolBatch: { results: [{ terminate: false }] } });
    expect(retry).toEqual(answer);
    expect(h.summarizer.requests).toHaveLength(1);
  });

  it("is reported as committed-then-failed when the run rejects after its commit (the job proves the commit)", async () => {
    await h.conversation(4);
    const failing = new TurnEndService({
      sessions: h.sessions,
      compaction: {
        locks: h.service.locks,
        run: async (params, ctx) => {
          await h.service.run(params, ctx);
          throw new Error("the reply was lost on the way");
        },
      },
      settings: { forSession: () => h.settings },
    });
    const answer = await failing.end({ sessionId: h.sessionId, contextWindow: WINDOW, assistant: overflowReply() });
    expect(answer).toMatchObject({
      followUp: "none",
      checkpoint: { status: "committed", entry: { type: "compaction" } },
      failedAfterCheckpoint: "the reply was lost on the way",
      overflow: { recovered: true },
    });
    // The checkpoint stands: the failed reply stays set aside and the compaction is the leaf.
    expect(leaf()).toBe(answer.checkpoint!.entry!.id);
  });

  it("is reported as committed-then-failed when storing the answer fails, also to the retry after it", async () => {
    await h.conversation(4);
    const save = vi.spyOn(h.store, "saveRequestResult").mockImplementationOnce(() => {
      throw new Error("disk I/O error");
    });
    const answer = await end({ requestId: "t4", assistant: withUsage(9_500), queuedInputs: 1 });
    expect(answer).toMatchObject({
      followUp: "none",
      checkpoint: { status: "committed" },
      failedAfterCheckpoint: expect.stringContaining("disk I/O error"),
    });
    save.mockRestore();

    const entries = h.entryCount();
    const retry = await end({ requestId: "t4", assistant: withUsage(9_500), queuedInputs: 1 });
    expect(retry).toMatchObject({ followUp: "none", checkpoint: { status: "committed", entry: { id: answer.checkpoint!.entry!.id } } });
    expect(retry.failedAfterCheckpoint).toContain("earlier attempt");
    expect(h.entryCount()).toBe(entries);
    expect(h.summarizer.requests).toHaveLength(1);
  });
});

describe("one long operation per session", () => {
  it("answers without a checkpoint while another compaction holds the session", async () => {
    await h.conversation(4);
    h.summarizer.mode = "hold";
    const manual = h.service.run({ sessionId: h.sessionId, reason: "manual" });
    await vi.waitFor(() => expect(h.summarizer.holding).toBe(1));
    const answer = await end({ assistant: withUsage(9_500), toolBatch: { results: [{ terminate: false }] } });
    expect(answer).toMatchObject({ followUp: "continue", message: expect.stringContaining("a compaction is already running") });
    expect(answer.checkpoint).toBeUndefined();
    h.summarizer.release();
    await manual;
  });
});
