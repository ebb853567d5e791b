import { SPLIT_TURN_SEPARATOR, summaryCutNote } from "@base-context/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CompactionEntry, CompactionProgress } from "@base-context/protocol";
import { AppError, CancelledError, RequestFailedError } from "../errors.js";
import type { CompactHookOutcome, CompactHooks } from "../hooks/compact-hooks.js";
import { assistant, harness, toolResult, until, user, type Harness } from "./test-support.js";

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h.cleanup();
});

const manual = (extra: Partial<Parameters<Harness["service"]["run"]>[0]> = {}) => ({
  sessionId: h.sessionId,
  reason: "manual" as const,
  ...extra,
});

describe("compaction/run", () => {
  it("commits a compaction under the leaf with the summary, file lists, summarizer and custom instructions", async () => {
    await h.append(user("read the config"));
    await h.append(assistant("reading", { id: "c1", name: "read", path: "src/config.ts" }));
    await h.append(toolResult("c1", "read", "export const config = {}"));
    await h.conversation(4);
    const leaf = h.store.requireSession(h.sessionId).leafId;

    const result = await h.service.run(manual({ customInstructions: "focus on the config" }));

    expect(result.status).toBe("committed");
    const entry = result.entry as CompactionEntry;
    expect(entry).toMatchObject({ type: "compaction", parentId: leaf, customInstructions: "focus on the config" });
    expect(entry.summary).toContain("## Goal\nhistory summary 1");
    expect(entry.summary).toContain("<read-files>\nsrc/config.ts\n</read-files>");
    expect(entry.details).toMatchObject({ readFiles: ["src/config.ts"], modifiedFiles: [], summarizer: "openai:scripted" });
    // The retention report, also in the reply; the file is in the appended file list.
    expect((entry.details as { retention: unknown }).retention).toEqual(result.retention);
    expect(result.retention?.files).toEqual({ kept: 1, total: 1 });
    expect(entry.fromHook).toBeUndefined();
    expect(result.summarizer).toBe("openai:scripted");
    expect(result.stats).toMatchObject({ isSplitTurn: false, turnPrefixMessages: 0 });
    expect(result.stats!.summarizedMessages).toBeGreaterThan(0);
    expect(h.summarizer.requests).toHaveLength(1);
    expect(h.summarizer.requests[0]!.prompt).toContain("Additional focus: focus on the config");
    expect(h.summarizer.requests[0]!.maxTokens).toBe(800);
    expect(h.store.requireSession(h.sessionId).leafId).toBe(entry.id);
    // The reply comes with the new entry's token count stored.
    expect(h.store.getEntry(h.sessionId, entry.id)!.tokens).toBeGreaterThan(0);
  });

  it("cuts a model's summary to limits.maxSummaryBytes before storing it, with a note", async () => {
    await h.conversation(5);
    h.settings.limits.maxSummaryBytes = 4096;
    h.summarizer.mode = async () => ({ text: `## Goal\n${"é".repeat(50_000)}`, summarizer: "openai:scripted" });
    const result = await h.service.run(manual());
    const entry = result.entry as CompactionEntry;
    expect(Buffer.byteLength(entry.summary)).toBeLessThanOrEqual(4096);
    expect(entry.summary).toMatch(/^## Goal\né+/);
    expect(entry.summary.endsWith(summaryCutNote(4096))).toBe(true);
  });

  it("records the job from prepared to committed, with the result a retry gets back", async () => {
    await h.conversation(5);
    const result = await h.service.run(manual({ requestId: "r1" }));
    const { jobs } = h.service.status({ sessionId: h.sessionId });
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      id: result.jobId,
      requestId: "r1",
      reason: "manual",
      state: "committed",
      entryId: result.entry!.id,
      summarizer: "openai:scripted",
    });
    expect(jobs[0]!.result).toEqual(result);
    expect(jobs[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(h.service.status({ requestId: "r1" }).jobs.map((job) => job.id)).toEqual([result.jobId]);
  });

  it("answers nothing_to_compact for a tiny session, without a summarizer call and without writing", async () => {
    await h.conversation(1);
    const before = h.entryCount();
    const result = await h.service.run(manual());
    expect(result).toMatchObject({ status: "nothing_to_compact", message: "nothing to summarize: everything fits in the kept part" });
    expect(h.summarizer.requests).toHaveLength(0);
    expect(h.entryCount()).toBe(before);
    expect(h.service.status({ sessionId: h.sessionId }).jobs[0]!.state).toBe("nothing");
  });

  it('is disabled by context.mode "off" for every reason, and by compaction.enabled false for the threshold only', async () => {
    await h.conversation(5);
    h.settings.context.mode = "off";
    expect((await h.service.run(manual())).status).toBe("disabled");
    expect((await h.service.run(manual({ reason: "threshold" }))).status).toBe("disabled");
    expect(await h.service.prepare(h.sessionId)).toEqual({ nothing: 'compaction is disabled: context.mode is "off"' });

    h.settings.context.mode = "on";
    h.settings.compaction.enabled = false;
    const threshold = await h.service.run(manual({ reason: "threshold" }));
    expect(threshold).toMatchObject({ status: "disabled", message: expect.stringContaining("compaction.enabled is false") });
    expect(h.summarizer.requests).toHaveLength(0);
    expect((await h.service.run(manual())).status).toBe("committed");
  });

  it("applies the run's settings overrides (keepRecentTokens)", async () => {
    await h.conversation(5);
    const everything = await h.service.prepare(h.sessionId, { keepRecentTokens: 100_000 });
    expect(everything).toEqual({ nothing: "nothing to summarize: everything fits in the kept part" });
    const result = await h.service.run(manual({ settings: { keepRecentTokens: 100 } }));
    expect(result.stats!.keptEntries).toBe(1);
  });
});

describe("idempotency and concurrency", () => {
  it("returns the committed result for a retried requestId without a second summarizer call", async () => {
    await h.conversation(5);
    const first = await h.service.run(manual({ requestId: "same" }));
    const entries = h.entryCount();
    const retry = await h.service.run(manual({ requestId: "same" }));
    expect(retry).toEqual(first);
    expect(h.summarizer.requests).toHaveLength(1);
    expect(h.entryCount()).toBe(entries);
  });

  it("lets a retry of the run in flight join it", async () => {
    await h.conversation(5);
    h.summarizer.mode = "hold";
    const first = h.service.run(manual({ requestId: "r" }));
    await until(() => h.summarizer.holding === 1);
    const retry = h.service.run(manual({ requestId: "r" }));
    h.summarizer.release();
    expect(await retry).toEqual(await first);
    expect(h.summarizer.requests).toHaveLength(1);
  });

  it("refuses a second compaction of the same session with session_busy, and accepts appends meanwhile", async () => {
    await h.conversation(5);
    h.summarizer.mode = "hold";
    const first = h.service.run(manual());
    await until(() => h.summarizer.holding === 1);
    const second = await h.service.run(manual()).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(AppError);
    expect(second).toMatchObject({ code: "session_busy", data: { sessionId: h.sessionId, operation: "compaction" } });
    const appended = await h.append(user("while summarizing"));
    h.summarizer.release();
    const result = await first;
    expect(result.status).toBe("committed");
    // The entry appended meanwhile is kept: the compaction is its child.
    expect(result.entry!.parentId).toBe(appended);
    // The lock is released: a new run may start.
    expect((await h.service.run(manual())).status).not.toBeUndefined();
  });

  it("refuses a requestId already used by another method", async () => {
    await h.conversation(5);
    await h.sessions.append({ sessionId: h.sessionId, entry: user("x"), requestId: "taken" });
    await expect(h.service.run(manual({ requestId: "taken" }))).rejects.toMatchObject({ code: "request_id_conflict" });
  });
});

describe("stale, cancel and failure write nothing", () => {
  it("is stale when the session moved to another branch during summarization", async () => {
    const ids = await h.conversation(5);
    h.summarizer.mode = "hold";
    const running = h.service.run(manual());
    await until(() => h.summarizer.holding === 1);
    await h.sessions.branch({ sessionId: h.sessionId, entryId: ids[3]! });
    const before = h.entryCount();
    h.summarizer.release();
    const result = await running;
    expect(result.status).toBe("stale");
    expect(result.message).toContain("nothing was written");
    expect(h.entryCount()).toBe(before);
    expect(h.service.status({ sessionId: h.sessionId }).jobs[0]!.state).toBe("stale");
  });

  it("rejects with CancelledError when the signal aborts, and writes nothing", async () => {
    await h.conversation(5);
    h.summarizer.mode = "hold";
    const controller = new AbortController();
    const before = h.entryCount();
    const running = h.service.run(manual(), { signal: controller.signal });
    await until(() => h.summarizer.holding === 1);
    controller.abort(new CancelledError());
    await expect(running).rejects.toBeInstanceOf(CancelledError);
    expect(h.entryCount()).toBe(before);
    expect(h.service.status({ sessionId: h.sessionId }).jobs[0]).toMatchObject({ state: "cancelled" });
  });

  it("rejects with the model's RequestFailedError when fallback is off", async () => {
    await h.conversation(5);
    h.settings.summarizer.fallback = false;
    h.summarizer.mode = () => Promise.reject(new RequestFailedError("summarizer openai:scripted failed: HTTP 500: boom"));
    const before = h.entryCount();
    await expect(h.service.run(manual())).rejects.toThrow("HTTP 500: boom");
    expect(h.entryCount()).toBe(before);
    expect(h.service.status({ sessionId: h.sessionId }).jobs[0]).toMatchObject({ state: "failed", error: expect.stringContaining("boom") });
  });

  it("falls back to the extractive summarizer and records why", async () => {
    await h.conversation(5);
    h.summarizer.mode = () => Promise.reject(new RequestFailedError("summarizer openai:scripted failed: HTTP 500: boom"));
    const result = await h.service.run(manual());
    expect(result.status).toBe("committed");
    expect(result.summarizer).toBe("extractive");
    expect((result.entry as CompactionEntry).details).toMatchObject({
      summarizer: "extractive",
      fallback: { from: "openai:scripted", error: expect.stringContaining("boom") },
    });
  });
});

describe("split turn", () => {
  it("summarizes the history and the turn prefix in parallel and merges them with the separator", async () => {
    await h.conversation(3, "early");
    await h.append(user("one huge turn"));
    for (let i = 0; i < 6; i++) await h.append(assistant(`step ${i}`));
    h.summarizer.mode = "hold";
    const running = h.service.run(manual());
    // Both requests are out at once.
    await until(() => h.summarizer.holding === 2);
    h.summarizer.release("## Goal\npart");
    const result = await running;
    expect(result.stats!.isSplitTurn).toBe(true);
    expect(h.summarizer.requests.map((r) => r.kind).sort()).toEqual(["history", "turnPrefix"]);
    expect((result.entry as CompactionEntry).summary.startsWith(`## Goal\npart${SPLIT_TURN_SEPARATOR}## Goal\npart`)).toBe(true);
    expect(h.summarizer.requests.find((r) => r.kind === "turnPrefix")!.maxTokens).toBe(500);
  });
});

describe("plugin hooks", () => {
  const hooks = (outcome: CompactHookOutcome, seen: unknown[] = []): CompactHooks => ({
    async runCompactHook(event, _signal, context) {
      seen.push({ event, context });
      return outcome;
    },
  });

  /** A fresh harness whose compaction service has these hooks. */
  const withHooks = async (compactHooks: CompactHooks) => {
    await h.cleanup();
    h = await harness({ hooks: compactHooks });
  };

  it("uses a plugin's compaction as returned, marked fromHook, without a summarizer call", async () => {
    const seen: unknown[] = [];
    // The plugin picks its own first kept entry, once the conversation has one.
    let firstKeptEntryId = "";
    await withHooks({
      async runCompactHook(event, signal, context) {
        const compaction = { summary: "plugin summary", firstKeptEntryId, tokensBefore: 42, details: { mine: true } };
        return hooks({ compaction, pluginId: "p1" }, seen).runCompactHook(event, signal, context);
      },
    });
    const ids = await h.conversation(5);
    firstKeptEntryId = ids[6]!;
    const result = await h.service.run(manual({ customInstructions: "keep it short" }));
    expect(result).toMatchObject({ status: "committed", summarizer: "plugin:p1" });
    expect(result.entry).toMatchObject({
      summary: "plugin summary",
      firstKeptEntryId: ids[6],
      tokensBefore: 42,
      details: { mine: true },
      fromHook: true,
      customInstructions: "keep it short",
    });
    expect(h.summarizer.requests).toHaveLength(0);
    expect(seen[0]).toMatchObject({
      event: { customInstructions: "keep it short" },
      context: { sessionId: h.sessionId, projectDir: "/projects/app" },
    });
    expect((seen[0] as { event: { branchEntries: unknown[] } }).event.branchEntries).toHaveLength(10);
  });

  it("reports a plugin's cancel as status cancelled and writes nothing", async () => {
    await withHooks(hooks({ cancel: true, pluginId: "p2" }));
    await h.conversation(5);
    const before = h.entryCount();
    const result = await h.service.run(manual());
    expect(result).toMatchObject({ status: "cancelled", message: "cancelled by plugin p2" });
    expect(h.entryCount()).toBe(before);
  });

  it("skips the hook when no plugin could answer", async () => {
    let called = false;
    await withHooks({
      hasCompactHook: () => false,
      runCompactHook: async () => {
        called = true;
        return undefined;
      },
    });
    await h.conversation(5);
    expect((await h.service.run(manual())).status).toBe("committed");
    expect(called).toBe(false);
  });
});

describe("reporting", () => {
  it("sends didStart, progress begin → report → end and didEnd with the entry id", async () => {
    await h.conversation(5);
    const events: unknown[] = [];
    const result = await h.service.run(manual({ workDoneToken: "t1" }), {
      notify: (decl, params) => events.push([decl.method, params]),
      progress: (token, value: CompactionProgress) => events.push(["progress", token, value.kind]),
    });
    expect(events).toEqual([
      ["compaction/didStart", { sessionId: h.sessionId, reason: "manual" }],
      ["progress", "t1", "begin"],
      ["progress", "t1", "report"],
      ["progress", "t1", "report"],
      ["progress", "t1", "end"],
      ["compaction/didEnd", { sessionId: h.sessionId, reason: "manual", status: "committed", entryId: result.entry!.id }],
    ]);
  });
});

describe("after the commit", () => {
  it("stays committed when a caller's notification callback throws", async () => {
    await h.conversation(5);
    const result = await h.service.run(manual(), {
      notify: (decl) => {
        if (decl.method === "compaction/didEnd") throw new Error("client went away");
      },
    });
    expect(result.status).toBe("committed");
    expect(h.service.status({ sessionId: h.sessionId }).jobs[0]!.state).toBe("committed");
  });
});

describe("interrupted jobs", () => {
  it("marks jobs left running by a process that is gone, and leaves a live daemon's alone", async () => {
    const insert = (id: string, ownerPid: number, state: "prepared" | "summarizing") =>
      h.store.jobs.insert({ id, sessionId: h.sessionId, reason: "manual", state, ownerPid, nowMs: Date.now() });
    insert("dead", 999_999_001, "summarizing");
    insert("live", 999_999_002, "prepared");
    const marked = h.service.markInterruptedJobs((pid) => pid === 999_999_002);
    expect(marked).toBe(1);
    expect(h.store.jobs.get("dead")).toMatchObject({ state: "interrupted", error: expect.stringContaining("ended") });
    expect(h.store.jobs.get("live")!.state).toBe("prepared");
  });

  it("reports another daemon's job interrupted in compaction/status once that daemon is gone", () => {
    const insert = (id: string, ownerPid: number, ownerStart: string | null) =>
      h.store.jobs.insert({ id, sessionId: h.sessionId, reason: "manual", state: "summarizing", ownerPid, ownerStart, nowMs: Date.now() });
    insert("gone", 999_999_003, null);
    insert("reused-pid", 999_999_004, "boot:1");
    insert("running", 999_999_005, "boot:2");
    const probe = { exists: (pid: number) => pid !== 999_999_003, startOf: () => "boot:2" };
    const states = Object.fromEntries(h.service.status({ sessionId: h.sessionId }, probe).jobs.map((job) => [job.id, job.state]));
    expect(states).toEqual({ gone: "interrupted", "reused-pid": "interrupted", running: "summarizing" });
    expect(h.store.jobs.get("gone")!.error).toMatch(/ended/);
  });

  it("leaves this process's running job alone in compaction/status", () => {
    h.store.jobs.insert({
      id: "mine",
      sessionId: h.sessionId,
      reason: "manual",
      state: "summarizing",
      ownerPid: process.pid,
      nowMs: Date.now(),
    });
    expect(h.service.status({ sessionId: h.sessionId }, () => false).jobs[0]!.state).toBe("summarizing");
  });
});

describe("compaction/run on top of another agent's compaction", () => {
  const said = (text: string) => ({ type: "message" as const, message: { role: "user" as const, content: text } });

  it("hands the summarizer that summary restored from the messages it replaced; its own summaries as they are", async () => {
    await h.append(said("Add a retry to the uploader. Never touch migrations/ in this task."));
    await h.conversation(2, "early");
    const firstKept = await h.append(said("Carry on."));
    await h.append(assistant("carrying on"));
    await h.append({ type: "compaction", summary: "## Goal\nWork on the uploader.", firstKeptEntryId: firstKept, tokensBefore: 2000, details: { source: "claude-code" } });
    await h.conversation(4, "late");

    const dryRun = await h.service.prepare(h.sessionId);
    const first = await h.service.run(manual());
    expect(first.status).toBe("committed");
    const previous = h.summarizer.requests[0]!.previousSummary!;
    expect(previous.startsWith("## Goal\nWork on the uploader.")).toBe(true);
    expect(previous).toContain("- User constraint: Never touch migrations/ in this task.");
    expect(previous).toContain("- User request: Add a retry to the uploader.");
    expect("preparation" in dryRun && dryRun.preparation.previousSummary).toBe(previous);

    // The next compaction updates ours, checked when it was written: read as stored.
    await h.conversation(4, "later");
    expect((await h.service.run(manual())).status).toBe("committed");
    expect(h.summarizer.requests.at(-1)!.previousSummary).toBe((first.entry as CompactionEntry).summary);
  });
});
