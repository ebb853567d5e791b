/**
 * Compaction over stdio against the local fake OpenAI server: what the model is asked, what is
 * committed, and what happens when the model is slow, failing, cancelled or overtaken by the
 * session moving on (docs/design.md#compaction, docs/protocol.md).
 */
import {
  CompactionDidEnd,
  CompactionDidStart,
  CompactionPrepare,
  CompactionRun,
  CompactionStatusRequest,
  ContextBuild,
  EntryAppend,
  ErrorCodes,
  Exit,
  SessionBranch,
  SessionCreate,
  SessionGet,
  Shutdown,
  type CompactionEntry,
  type CompactionProgress,
  type EntryInput,
  type SessionEntry,
} from "@base-context/protocol";
import { INITIAL_SUMMARY_PROMPT, SPLIT_TURN_SEPARATOR, SUMMARIZATION_SYSTEM_PROMPT, TURN_PREFIX_SUMMARY_PROMPT } from "@base-context/core";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { appendAll, assistant, rpcError, toolResult, user } from "./fixtures/e2e.js";
import { startDaemon, useDaemon } from "./support/daemon.js";
import { defaultSummary, reply, useFakeOpenAI, type FakeReply } from "./support/fake-openai.js";
import { tempDirs } from "./support/temp-dir.js";
import { waitFor } from "./support/wait.js";

const MODEL = "fake-summarizer";
const RESERVE = 2000;

/** Project folders for the file's sessions: registered first, vitest runs this afterAll last (after the daemon's). */
const dirs = tempDirs();
afterAll(() => dirs.cleanup());
const fake = useFakeOpenAI();
/**
 * One daemon for the file, its summarizer the fake server (global settings). keepRecentTokens 1
 * keeps only the last entry: a user message ends a clean cut, an assistant one splits its turn.
 * Tests that need other settings put their session in a project with its own settings file.
 */
const d = useDaemon(() => ({
  settings: {
    compaction: { reserveTokens: RESERVE, keepRecentTokens: 1 },
    summarizer: { provider: "openai", baseURL: fake.baseURL, model: MODEL, maxRetries: 2, timeoutMs: 20_000 },
  },
  env: { OPENAI_API_KEY: "test-key" },
}));
beforeEach(() => {
  fake.requests.length = 0;
  fake.setHandler((request) => reply.text(defaultSummary(request.body)));
});

/** A session in its own project folder, with that project's settings file (if any). */
async function session(projectSettings?: Record<string, unknown>): Promise<string> {
  const project = dirs.make("bc-compaction-project-");
  if (projectSettings) {
    mkdirSync(join(project, ".base-context"));
    writeFileSync(join(project, ".base-context", "settings.json"), JSON.stringify(projectSettings));
  }
  return (await d.client.request(SessionCreate, { cwd: project })).session.id;
}

/** A finished turn that read a file, then a new question (kept): a clean cut before it. */
const RENAME_TURN: EntryInput[] = [
  user("Rename parseConfig to loadConfig everywhere."),
  assistant("Reading the config module first.", { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "src/config.ts" } }] }),
  toolResult("call_1", "read", "export function parseConfig() {}"),
  assistant("Renamed it in src/config.ts and updated 3 call sites."),
  user("Now run the tests."),
];
const RENAME_CONVERSATION = [
  "[User]: Rename parseConfig to loadConfig everywhere.",
  "[Assistant]: Reading the config module first.",
  '[Assistant tool calls]: read(path="src/config.ts")',
  "[Tool result]: export function parseConfig() {}",
  "[Assistant]: Renamed it in src/config.ts and updated 3 call sites.",
].join("\n\n");

const entryCount = async (sessionId: string) => (await d.client.request(SessionGet, { sessionId })).entryCount;
const chatBodies = () => fake.chatRequests().map((request) => request.body!);

/** A reply the test releases by hand, to act while the model is "thinking". */
function heldReply(): { handler: () => Promise<FakeReply>; release(): void } {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { handler: () => gate.then(() => reply.text("## Goal\nheld summary")), release: () => release() };
}

describe("compaction/run with a model", () => {
  it("sends the exact prompt, system prompt, max_tokens and model, and commits the summary the context then starts with", async () => {
    const sessionId = await session();
    const stored = await appendAll(d.client, sessionId, RENAME_TURN);
    const kept = stored[4]!;

    const result = await d.client.request(CompactionRun, { sessionId });

    expect(chatBodies()).toHaveLength(1);
    const body = chatBodies()[0]!;
    expect(body.model).toBe(MODEL);
    expect(body.max_tokens).toBe(Math.floor(0.8 * RESERVE));
    expect(body.messages).toEqual([
      { role: "system", content: SUMMARIZATION_SYSTEM_PROMPT },
      { role: "user", content: `<conversation>\n${RENAME_CONVERSATION}\n</conversation>\n\n${INITIAL_SUMMARY_PROMPT}` },
    ]);

    const modelText = defaultSummary(body);
    expect(result).toMatchObject({ status: "committed", summarizer: `openai:${MODEL}` });
    const entry = result.entry as CompactionEntry;
    expect(entry).toEqual({
      type: "compaction",
      id: expect.any(String),
      parentId: kept.id,
      timestamp: expect.any(String),
      summary: `${modelText}\n\n<read-files>\nsrc/config.ts\n</read-files>`,
      firstKeptEntryId: kept.id,
      tokensBefore: expect.any(Number),
      details: { readFiles: ["src/config.ts"], modifiedFiles: [], summarizer: `openai:${MODEL}`, retention: result.retention },
    });
    // What the summary kept: the file is in the appended list, nothing needed repair.
    expect(result.retention).toMatchObject({ files: { kept: 1, total: 1 }, repaired: { files: 0, errors: 0, constraints: 0 } });
    expect(entry.tokensBefore).toBeGreaterThan(0);

    const context = await d.client.request(ContextBuild, { sessionId });
    expect(context.compactionId).toBe(entry.id);
    expect(context.messages[0]).toMatchObject({ role: "compactionSummary", summary: entry.summary });
    expect(context.messages.slice(1)).toEqual([(kept as Extract<SessionEntry, { type: "message" }>).message]);
  });

  it("retries a 429 and then succeeds", async () => {
    const sessionId = await session();
    await appendAll(d.client, sessionId, RENAME_TURN);
    fake.enqueue(reply.rateLimited({ retryAfterMs: 20 }));

    const result = await d.client.request(CompactionRun, { sessionId });
    expect(result.status).toBe("committed");
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it("fails with -32803 and the provider's message when the model keeps failing and fallback is off, writing nothing", async () => {
    const sessionId = await session({ summarizer: { fallback: false, maxRetries: 1 } });
    await appendAll(d.client, sessionId, RENAME_TURN);
    fake.setHandler(() => reply.serverError("The engine is overloaded"));

    const error = await rpcError(d.client.request(CompactionRun, { sessionId }));
    expect(error.code).toBe(ErrorCodes.RequestFailed);
    expect(error.code).toBe(-32803);
    expect(error.message).toContain("HTTP 500: The engine is overloaded");
    expect(error.message).toContain("after 2 attempts");
    expect(error.data?.code).toBe("request_failed");
    expect(fake.chatRequests()).toHaveLength(2);
    expect(await entryCount(sessionId)).toBe(RENAME_TURN.length);
    const { jobs } = await d.client.request(CompactionStatusRequest, { sessionId });
    expect(jobs[0]).toMatchObject({ state: "failed", error: expect.stringContaining("The engine is overloaded") });
  });

  it("falls back to the extractive summarizer when the model fails, and records the fallback", async () => {
    const sessionId = await session({ summarizer: { maxRetries: 0 } });
    await appendAll(d.client, sessionId, RENAME_TURN);
    fake.setHandler(() => reply.serverError("The engine is overloaded"));

    const result = await d.client.request(CompactionRun, { sessionId });
    expect(result).toMatchObject({ status: "committed", summarizer: "extractive" });
    const entry = result.entry as CompactionEntry;
    expect(entry.details).toEqual({
      readFiles: ["src/config.ts"],
      modifiedFiles: [],
      summarizer: "extractive",
      fallback: { from: `openai:${MODEL}`, error: expect.stringContaining("HTTP 500: The engine is overloaded") },
      retention: result.retention,
      fallbacks: [{ from: `openai:${MODEL}`, error: expect.stringContaining("HTTP 500: The engine is overloaded") }],
    });
    expect(entry.summary).toContain("## Goal");
    expect(entry.summary).toContain("parseConfig");
  });

  it("puts custom instructions in the prompt with high priority and on the entry", async () => {
    const sessionId = await session();
    await appendAll(d.client, sessionId, RENAME_TURN);
    const result = await d.client.request(CompactionRun, { sessionId, customInstructions: "remember the exact rename" });
    const prompt = chatBodies()[0]!.messages![1]!.content as string;
    expect(prompt.endsWith(`${INITIAL_SUMMARY_PROMPT}\n\nAdditional focus: remember the exact rename`)).toBe(true);
    expect((result.entry as CompactionEntry).customInstructions).toBe("remember the exact rename");
  });

  it("summarizes a split turn with two model calls and merges them with the separator", async () => {
    const sessionId = await session();
    await appendAll(d.client, sessionId, [
      ...RENAME_TURN.slice(0, 4),
      user("Now migrate the callers."),
      assistant("Migrating src/app.ts.", { toolCalls: [{ id: "call_2", name: "edit", arguments: { path: "src/app.ts" } }] }),
      toolResult("call_2", "edit", "ok"),
      assistant("Migrated src/app.ts; two callers left."),
    ]);
    fake.setHandler((request) => {
      const prompt = request.body!.messages![1]!.content as string;
      return reply.text(prompt.includes(TURN_PREFIX_SUMMARY_PROMPT) ? "PREFIX SUMMARY" : "HISTORY SUMMARY");
    });

    const result = await d.client.request(CompactionRun, { sessionId });
    const bodies = chatBodies();
    expect(bodies).toHaveLength(2);
    const prefixBody = bodies.find((b) => (b.messages![1]!.content as string).includes(TURN_PREFIX_SUMMARY_PROMPT))!;
    expect(prefixBody.max_tokens).toBe(Math.floor(0.5 * RESERVE));
    expect(prefixBody.messages![1]!.content).toBe(
      `<conversation>\n[User]: Now migrate the callers.\n\n[Assistant]: Migrating src/app.ts.\n\n[Assistant tool calls]: edit(path="src/app.ts")\n\n[Tool result]: ok\n</conversation>\n\n${TURN_PREFIX_SUMMARY_PROMPT}`,
    );
    const entry = result.entry as CompactionEntry;
    expect(entry.summary).toBe(
      `HISTORY SUMMARY${SPLIT_TURN_SEPARATOR}PREFIX SUMMARY\n\n<read-files>\nsrc/config.ts\n</read-files>\n\n<modified-files>\nsrc/app.ts\n</modified-files>`,
    );
    expect(result.stats).toMatchObject({ isSplitTurn: true, turnPrefixMessages: 3, keptEntries: 1 });
  });

  it("reports progress for a workDoneToken and sends didStart / didEnd", async () => {
    const sessionId = await session();
    await appendAll(d.client, sessionId, RENAME_TURN);
    const seen: string[] = [];
    const progress: CompactionProgress[] = [];
    const listeners = [
      d.client.onNotification(CompactionDidStart, (p) => p.sessionId === sessionId && seen.push(`start ${p.reason}`)),
      d.client.onNotification(CompactionDidEnd, (p) => p.sessionId === sessionId && seen.push(`end ${p.status} ${p.entryId ?? "-"}`)),
      d.client.onProgress<CompactionProgress>("compact-1", (value) => progress.push(value)),
    ];

    const result = await d.client.request(CompactionRun, { sessionId, workDoneToken: "compact-1" });
    await waitFor(() => seen.length === 2);
    for (const listener of listeners) listener.dispose();
    expect(seen).toEqual(["start manual", `end committed ${result.entry!.id}`]);
    // begin, reports (plugins asked, summarizing, committing), end.
    const kinds = progress.map((p) => p.kind);
    expect(kinds[0]).toBe("begin");
    expect(kinds.slice(1, -1).every((kind) => kind === "report")).toBe(true);
    expect(kinds.at(-1)).toBe("end");
    expect(progress[0]).toMatchObject({ kind: "begin", title: "Compacting session", cancellable: true });
    const reports = progress.filter((p) => p.kind === "report");
    expect(reports).toContainEqual({
      kind: "report",
      message: `Summarizing 4 messages with openai:${MODEL} at ${fake.baseURL.replace(/\/+$/, "")}, then extractive`,
      percentage: 10,
    });
    expect(reports.at(-1)).toEqual({ kind: "report", message: "Committing the summary", percentage: 90 });
    // The result names the summarizer that ran and the host the conversation went to.
    expect(progress.at(-1)).toEqual({
      kind: "end",
      message: `summarized 4 messages with openai:${MODEL} at ${fake.baseURL.replace(/\/+$/, "")}`,
    });
  });
});

describe("the session moving on during summarization", () => {
  /** RENAME_TURN in a new session, its compaction running and held at the model until `release()`. */
  async function compactionHeldAtTheModel() {
    const sessionId = await session();
    const stored = await appendAll(d.client, sessionId, RENAME_TURN);
    const held = heldReply();
    fake.setHandler(held.handler);
    const running = d.client.request(CompactionRun, { sessionId });
    await waitFor(() => fake.chatRequests().length === 1);
    return { sessionId, stored, running, release: held.release };
  }

  it("keeps an entry appended meanwhile after the kept range and commits", async () => {
    const { sessionId, stored, running, release } = await compactionHeldAtTheModel();
    const { entry: appended } = await d.client.request(EntryAppend, { sessionId, entry: assistant("Tests pass.") });
    release();
    const result = await running;

    expect(result.status).toBe("committed");
    const entry = result.entry as CompactionEntry;
    expect(entry.parentId).toBe(appended.id);
    expect(entry.firstKeptEntryId).toBe(stored[4]!.id);
    const context = await d.client.request(ContextBuild, { sessionId });
    expect(context.messages.map((m) => m.role)).toEqual(["compactionSummary", "user", "assistant"]);
    expect(context.messages[2]).toEqual((appended as Extract<SessionEntry, { type: "message" }>).message);
  });

  it("is stale when the client branched away, and writes nothing", async () => {
    const { sessionId, stored, running, release } = await compactionHeldAtTheModel();
    await d.client.request(SessionBranch, { sessionId, entryId: stored[1]!.id });
    release();
    const result = await running;

    expect(result.status).toBe("stale");
    expect(result.entry).toBeUndefined();
    expect(await entryCount(sessionId)).toBe(RENAME_TURN.length);
    expect((await d.client.request(SessionGet, { sessionId })).leafId).toBe(stored[1]!.id);
  });

  it("cancels the model call on $/cancelRequest: -32800, nothing written", async () => {
    const sessionId = await session();
    await appendAll(d.client, sessionId, RENAME_TURN);
    fake.setHandler(() => reply.hang());
    const controller = new AbortController();

    const running = rpcError(d.client.request(CompactionRun, { sessionId }, { signal: controller.signal }));
    await waitFor(() => fake.chatRequests().length === 1);
    controller.abort();
    const error = await running;

    expect(error.code).toBe(ErrorCodes.RequestCancelled);
    expect(error.code).toBe(-32800);
    await waitFor(() => fake.chatRequests()[0]!.disconnected, { message: "the model request was not aborted" });
    expect(await entryCount(sessionId)).toBe(RENAME_TURN.length);
    const { jobs } = await d.client.request(CompactionStatusRequest, { sessionId });
    expect(jobs[0]!.state).toBe("cancelled");
  });

  it("is cancelled by shutdown, which waits for an append sent before it: the model call is not waited for", async () => {
    const home = dirs.make("bc-compaction-shutdown-");
    const settings = {
      compaction: { reserveTokens: RESERVE, keepRecentTokens: 1 },
      // A model that would hang for a minute: shutdown must not wait for it.
      summarizer: { provider: "openai", baseURL: fake.baseURL, model: MODEL, maxRetries: 0, timeoutMs: 60_000 },
    };
    const own = await startDaemon({ home, settings, env: { OPENAI_API_KEY: "test-key" } });
    try {
      const sessionId = (await own.client.request(SessionCreate, { cwd: dirs.make("bc-compaction-project-") })).session.id;
      await appendAll(own.client, sessionId, RENAME_TURN);
      fake.setHandler(() => reply.hang());
      const order: string[] = [];
      const running = rpcError(own.client.request(CompactionRun, { sessionId })).then((error) => {
        order.push("compaction");
        return error;
      });
      await waitFor(() => fake.chatRequests().length === 1);
      const appending = own.client.request(EntryAppend, { sessionId, entry: user("sent before shutdown") }).then((answer) => {
        order.push("append");
        return answer;
      });
      await own.client.request(Shutdown, {});
      order.push("shutdown");

      expect((await running).code).toBe(ErrorCodes.RequestCancelled);
      const appended = await appending;
      expect(order.slice(-1)).toEqual(["shutdown"]);
      await waitFor(() => fake.chatRequests()[0]!.disconnected, { message: "the model request was not aborted" });
      await own.client.notify(Exit, {});
      expect(await own.exited).toBe(0);

      // Stored: the append, no compaction; the job ended cancelled (not left running, nor interrupted).
      const after = await startDaemon({ home, settings, env: { OPENAI_API_KEY: "test-key" } });
      try {
        expect((await after.client.request(SessionGet, { sessionId })).leafId).toBe(appended.entry.id);
        const { jobs } = await after.client.request(CompactionStatusRequest, { sessionId });
        expect(jobs[0]!.state).toBe("cancelled");
      } finally {
        await after.close();
      }
    } finally {
      await own.close();
    }
  });
});

describe("idempotency, settings and nothing to do", () => {
  it("returns the committed entry for a retried requestId without a second model call", async () => {
    const sessionId = await session();
    await appendAll(d.client, sessionId, RENAME_TURN);
    const first = await d.client.request(CompactionRun, { sessionId, requestId: "compact-42" });
    const retry = await d.client.request(CompactionRun, { sessionId, requestId: "compact-42" });

    expect(retry).toEqual(first);
    expect(fake.chatRequests()).toHaveLength(1);
    expect(await entryCount(sessionId)).toBe(RENAME_TURN.length + 1);
    const status = await d.client.request(CompactionStatusRequest, { requestId: "compact-42" });
    expect(status.jobs).toEqual([expect.objectContaining({ state: "committed", entryId: first.entry!.id, sessionId })]);
  });

  it('is disabled for manual and threshold runs when context.mode is "off"', async () => {
    const sessionId = await session({ context: { mode: "off" } });
    await appendAll(d.client, sessionId, RENAME_TURN);
    expect(await d.client.request(CompactionRun, { sessionId })).toMatchObject({
      status: "disabled",
      message: expect.stringContaining('context.mode is "off"'),
    });
    expect((await d.client.request(CompactionRun, { sessionId, reason: "threshold" })).status).toBe("disabled");
    expect(fake.chatRequests()).toHaveLength(0);
    expect(await entryCount(sessionId)).toBe(RENAME_TURN.length);
  });

  it("with compaction.enabled false, refuses threshold runs but still compacts on a manual /compact", async () => {
    const sessionId = await session({ compaction: { enabled: false } });
    await appendAll(d.client, sessionId, RENAME_TURN);
    expect((await d.client.request(CompactionRun, { sessionId, reason: "threshold" })).status).toBe("disabled");
    expect(fake.chatRequests()).toHaveLength(0);
    expect((await d.client.request(CompactionRun, { sessionId, reason: "manual" })).status).toBe("committed");
  });

  it("answers nothing_to_compact on a tiny session, without any model call", async () => {
    const sessionId = await session();
    await appendAll(d.client, sessionId, [user("hello")]);
    const prepared = await d.client.request(CompactionPrepare, { sessionId });
    expect(prepared).toEqual({ nothing: "nothing to summarize: everything fits in the kept part" });
    const result = await d.client.request(CompactionRun, { sessionId });
    expect(result).toMatchObject({ status: "nothing_to_compact", message: "nothing to summarize: everything fits in the kept part" });
    expect(fake.chatRequests()).toHaveLength(0);
    expect(await entryCount(sessionId)).toBe(1);
  });

  it("prepares without side effects: what would be summarized and kept", async () => {
    const sessionId = await session();
    const stored = await appendAll(d.client, sessionId, RENAME_TURN);
    const prepared = await d.client.request(CompactionPrepare, { sessionId });
    if (!("preparation" in prepared)) throw new Error(`expected a preparation, got ${prepared.nothing}`);
    expect(prepared.preparation).toMatchObject({
      leafId: stored[4]!.id,
      firstKeptEntryId: stored[4]!.id,
      summarizeEntryIds: stored.slice(0, 4).map((e) => e.id),
      isSplitTurn: false,
      fileOps: { readFiles: ["src/config.ts"], modifiedFiles: [] },
      settings: { reserveTokens: RESERVE, keepRecentTokens: 1, enabled: true },
    });
    expect(fake.chatRequests()).toHaveLength(0);
    expect(await entryCount(sessionId)).toBe(RENAME_TURN.length);
  });
});
