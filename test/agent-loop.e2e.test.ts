/**
 * examples/agent-loop against the local OpenAI-compatible server and a real daemon: three prompts
 * whose answers need tool calls, a window small enough that the daemon compacts several times
 * (mid-task too), and one context-overflow error the daemon recovers from with a retry. Then the
 * built CLI, end to end, and its usage errors.
 */
import {
  CompactionStatusRequest,
  ContextBuild,
  EntryGet,
  SessionList,
  SessionPath,
  type BaseContextClient,
  type CompactionEntry,
  type SessionEntry,
} from "@base-context/protocol";
import OpenAI from "openai";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUMMARIZATION_SYSTEM_PROMPT } from "@base-context/core";
import { answerSummaryRequests, Inbox, openSession, runAgentLoop, workspaceTools, type AgentEvent, type TurnEndAnswer } from "../examples/agent-loop/dist/loop.js";
import { startDaemon } from "./support/daemon.js";
import { runNodeProgram } from "./support/run-cli.js";
import { defaultSummary, reply, startFakeOpenAI, type FakeOpenAI, type FakeReply, type RecordedRequest } from "./support/fake-openai.js";
import { tempDirs } from "./support/temp-dir.js";
import { storeEnvFor } from "./support/engine.js";

const LOOP_MAIN = fileURLToPath(new URL("../examples/agent-loop/dist/main.js", import.meta.url));
const AGENT_MODEL = "fake-agent";
const SUMMARIZER_MODEL = "fake-summarizer";
/** The agent's window; with RESERVE the daemon compacts above 1 800 tokens, keeping at least 400 (a cut never keeps less with a window). */
const WINDOW = 3_000;
const RESERVE = 1_200;
const KEEP = 400;
const SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:";
const OVERFLOW_ERROR = "This model's maximum context length is 3000 tokens. However, your messages resulted in 3412 tokens.";

const dirs = tempDirs();
let fake: FakeOpenAI;
let workspace: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  workspace = dirs.make("bc-agent-loop-workspace-");
  mkdirSync(join(workspace, "notes"));
  // 12 notes of ~350 tokens, each with a marker that says where its text went.
  for (let i = 1; i <= 12; i++) writeFileSync(join(workspace, notePath(i)), noteText(i));
  writeFileSync(join(workspace, "README.md"), "Team notes, one file per meeting.\n");
});
afterAll(async () => {
  await fake?.close();
  dirs.cleanup();
});

function notePath(i: number): string {
  return `notes/note-${String(i).padStart(2, "0")}.md`;
}

function noteText(i: number): string {
  const lines = [`# Meeting ${i} MARK-NOTE-${i}`, ""];
  for (let k = 1; k <= 18; k++)
    lines.push(`- Item ${k}: the team reviewed deployment step ${i * 100 + k} and agreed who owns it next week.`);
  return `${lines.join("\n")}\n`;
}

/** A daemon home whose settings compact often and summarize with the fake model (no fallback). */
function daemonHome(): string {
  const home = dirs.make("bc-agent-loop-home-");
  writeFileSync(
    join(home, "settings.json"),
    JSON.stringify({
      // Summaries only: the prune rung (which would hide the notes at this window) has tests of its own.
      compaction: { reserveTokens: RESERVE, keepRecentTokens: KEEP, prune: { enabled: false } },
      summarizer: { provider: "openai", baseURL: fake.baseURL, model: SUMMARIZER_MODEL, fallback: false, maxRetries: 0, timeoutMs: 60_000 },
    }),
  );
  return home;
}

/** The fake answers the summarizer with its default summary and the agent from `script`, in order. */
function scriptModel(script: FakeReply[]): { requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  fake.setHandler((request) => {
    if (request.body?.model === SUMMARIZER_MODEL) return reply.text(defaultSummary(request.body));
    requests.push(request);
    return script.shift() ?? reply.serverError("the test script has no reply left");
  });
  return { requests };
}

const readNote = (i: number): FakeReply => reply.toolCalls([{ name: "read", arguments: { path: notePath(i) } }]);
const markersIn = (value: unknown): string[] => JSON.stringify(value).match(/MARK-[A-Z]+-\d+/g) ?? [];
const messageMarkers = (entries: readonly SessionEntry[]): string[] =>
  entries.flatMap((entry) => (entry.type === "message" ? markersIn(entry.message) : []));

/** Checks the model request sent after each compaction: its summary, the kept tail, nothing summarized. How many it checked. */
async function checkRequestsAfterCompactions(
  client: BaseContextClient,
  sessionId: string,
  compactions: CompactionEntry[],
  requestsBefore: Map<string, number>,
  requests: RecordedRequest[],
): Promise<number> {
  let checked = 0;
  for (const compaction of compactions) {
    const index = requestsBefore.get(compaction.id);
    expect(index).toBeDefined();
    const request = requests[index!];
    if (!request) continue; // a compaction after the last request
    checked++;
    const messages = request.body?.messages ?? [];
    const summaryMessages = messages.filter((m) => typeof m.content === "string" && m.content.startsWith(SUMMARY_PREFIX));
    expect(summaryMessages).toHaveLength(1);
    expect(summaryMessages[0]!.content).toContain(compaction.summary);
    const rest = messages.filter((m) => !summaryMessages.includes(m));

    const upToCompaction = (await client.request(SessionPath, { sessionId, leafId: compaction.id })).entries;
    const firstKept = upToCompaction.findIndex((entry) => entry.id === compaction.firstKeptEntryId);
    expect(firstKept).toBeGreaterThan(0);
    const summarized = messageMarkers(upToCompaction.slice(0, firstKept));
    const kept = messageMarkers(upToCompaction.slice(firstKept));
    expect(summarized.length).toBeGreaterThan(0);
    for (const marker of summarized) expect(markersIn(rest)).not.toContain(marker);
    for (const marker of kept) expect(markersIn(rest)).toContain(marker);
  }
  return checked;
}

/** The tool results on `path`, each after the assistant message that called it. */
function expectToolResultsAfterTheirCalls(path: SessionEntry[]): void {
  const toolResults = path.flatMap((entry) => (entry.type === "message" && entry.message.role === "toolResult" ? [entry.message] : []));
  expect(toolResults).toHaveLength(13);
  expect(toolResults[0]).toMatchObject({
    toolName: "ls",
    isError: false,
    content: [{ type: "text", text: expect.stringContaining("note-12.md") }],
  });
  toolResults.slice(1).forEach((result, i) => {
    expect(result).toMatchObject({ toolName: "read", isError: false });
    expect(markersIn(result)).toEqual([`MARK-NOTE-${i + 1}`]);
    const callIndex = path.findIndex(
      (entry) =>
        entry.type === "message" &&
        entry.message.role === "assistant" &&
        entry.message.content.some((block) => block.type === "toolCall" && block.id === result.toolCallId),
    );
    const resultIndex = path.findIndex(
      (entry) => entry.type === "message" && entry.message.role === "toolResult" && entry.message.toolCallId === result.toolCallId,
    );
    expect(callIndex).toBeGreaterThanOrEqual(0);
    expect(resultIndex).toBeGreaterThan(callIndex);
  });
}

/** The overflow: stored as a failed reply (off the path), compacted with reason "overflow", retried, answered. */
async function expectOverflowRecovered(
  client: BaseContextClient,
  run: {
    sessionId: string;
    events: AgentEvent[];
    answers: TurnEndAnswer[];
    path: SessionEntry[];
    requestsBefore: Map<string, number>;
    requests: RecordedRequest[];
  },
): Promise<void> {
  const { sessionId, events, answers, path, requestsBefore, requests } = run;
  const retryAt = events.findIndex((event) => event.type === "turnEnd" && event.answer.followUp === "retry");
  expect(answers.filter((answer) => answer.followUp === "retry")).toHaveLength(1);
  const retryAnswer = (events[retryAt] as { answer: TurnEndAnswer }).answer;
  expect(retryAnswer).toMatchObject({ overflow: { recovered: true }, checkpoint: { status: "committed" } });
  const failed = events.slice(0, retryAt).findLast((event) => event.type === "reply");
  expect(failed).toMatchObject({
    message: { stopReason: "error", errorMessage: expect.stringContaining("maximum context length is 3000 tokens") },
  });
  const failedId = (failed as { entryId: string }).entryId;
  expect((await client.request(EntryGet, { sessionId, entryId: failedId })).entry).toMatchObject({
    type: "message",
    message: { stopReason: "error" },
  });
  expect(path.map((entry) => entry.id)).not.toContain(failedId);
  const retried = events.slice(retryAt).find((event) => event.type === "reply");
  expect(retried).toMatchObject({
    message: { stopReason: "stop", content: [{ type: "text", text: expect.stringContaining("MARK-ANSWER-2") }] },
  });
  const retriedRequest = requests[requestsBefore.get(retryAnswer.checkpoint!.entry!.id)!]!;
  expect(JSON.stringify(retriedRequest.body?.messages)).not.toContain(OVERFLOW_ERROR);
}

describe("the agent loop", () => {
  it("stores every message, compacts several times, recovers from an overflow, and sends what the daemon builds", {
    timeout: 120_000,
  }, async () => {
    const home = daemonHome();
    const d = await startDaemon({ home, env: { OPENAI_API_KEY: "test-key" } });
    try {
      const agent = scriptModel([
        reply.toolCalls([{ name: "ls", arguments: { path: "notes" } }]),
        ...[1, 2, 3, 4].map(readNote),
        reply.text("Meetings 1-4 were about deployment steps. MARK-ANSWER-1"),
        ...[5, 6, 7, 8].map(readNote),
        reply.error(400, OVERFLOW_ERROR, { type: "invalid_request_error", code: "context_length_exceeded" }),
        reply.text("Meetings 5-8 assigned owners. MARK-ANSWER-2"),
        ...[9, 10, 11, 12].map(readNote),
        reply.text("Meetings 9-12 closed the plan. MARK-ANSWER-3"),
      ]);
      const { sessionId } = await openSession(d.client, { cwd: workspace, provider: "openai-compatible", model: AGENT_MODEL });
      const events: AgentEvent[] = [];
      /** Compaction entry id → how many agent requests were sent before it committed. */
      const requestsBefore = new Map<string, number>();
      const inbox = new Inbox([
        "Summarize meetings 1 to 4 (list the notes folder first). MARK-PROMPT-1",
        "Now meetings 5 to 8. MARK-PROMPT-2",
        "And meetings 9 to 12. MARK-PROMPT-3",
      ]);
      inbox.close();

      const result = await runAgentLoop(
        {
          daemon: d.client,
          sessionId,
          openai: new OpenAI({ baseURL: fake.baseURL, apiKey: "test-key", maxRetries: 0 }),
          model: AGENT_MODEL,
          contextWindow: WINDOW,
          tools: workspaceTools(workspace),
          // Its own system prompt: the token counts this scenario compacts at do not move with the default one.
          systemPrompt: "You answer questions about meeting notes. Read them with the tools.",
          onEvent: (event) => {
            events.push(event);
            const entry =
              event.type === "turnEnd" && event.answer.checkpoint?.status === "committed" ? event.answer.checkpoint.entry : undefined;
            if (entry) requestsBefore.set(entry.id, agent.requests.length);
          },
        },
        inbox,
      );

      expect(result).toMatchObject({ ok: true, failures: 0, modelCalls: 17, unsent: [] });
      expect(agent.requests).toHaveLength(17);
      const answers = events.flatMap((event) => (event.type === "turnEnd" ? [event.answer] : []));
      expect(answers).toHaveLength(17);

      // Every request offered the tools.
      for (const request of agent.requests) expect(request.body?.tools?.map((tool) => tool.function?.name)).toEqual(["read", "ls"]);

      // --- Several compactions, each committed by turn/end and on the session path.
      const path = (await d.client.request(SessionPath, { sessionId })).entries;
      const compactions = path.filter((entry): entry is CompactionEntry => entry.type === "compaction");
      expect(compactions.length).toBeGreaterThanOrEqual(3);
      expect(result.compactions).toBe(compactions.length);
      const { jobs } = await d.client.request(CompactionStatusRequest, { sessionId, limit: 50 });
      const committed = jobs.filter((job) => job.state === "committed");
      expect(committed.filter((job) => job.reason === "threshold").length).toBeGreaterThanOrEqual(2);
      expect(committed.filter((job) => job.reason === "overflow")).toHaveLength(1);
      // At least one compaction happened mid-task: the tool batch still asked to go on.
      expect(answers.some((answer) => answer.checkpoint?.status === "committed" && answer.followUp === "continue")).toBe(true);
      // The read tool's paths are tracked across compactions.
      expect(JSON.stringify(compactions.at(-1)?.details)).toContain("notes/note-");

      // --- The model request after each compaction holds its summary, the kept tail, and nothing summarized.
      const checked = await checkRequestsAfterCompactions(d.client, sessionId, compactions, requestsBefore, agent.requests);
      expect(checked).toBeGreaterThanOrEqual(2);

      // --- Tool calls and their results were stored, in order, in pi's shapes.
      expectToolResultsAfterTheirCalls(path);

      // --- The overflow: stored as a failed reply, compacted with reason "overflow", retried, answered.
      await expectOverflowRecovered(d.client, { sessionId, events, answers, path, requestsBefore, requests: agent.requests });

      // --- followUp: "continue" after tool calls and to send a queued prompt, "none" at the very end.
      const afterAnswer1 = answers[5]!;
      expect(afterAnswer1.followUp).toBe("continue");
      expect(events.filter((event) => event.type === "prompt")).toHaveLength(3);
      expect(answers.at(-1)?.followUp).toBe("none");

      // --- The daemon's context is what was sent last (plus the final answer).
      const last = agent.requests.at(-1)!;
      const finalReply = events.findLast((event) => event.type === "reply") as { entryId: string };
      const leafBefore = path.find((entry) => entry.id === finalReply.entryId)!.parentId;
      const sentContext = await d.client.request(ContextBuild, { sessionId, leafId: leafBefore, format: "openai-chat" });
      expect(last.body?.messages?.[0]).toMatchObject({ role: "system" });
      expect(last.body?.messages?.slice(1)).toEqual(sentContext.messages);
      const now = await d.client.request(ContextBuild, { sessionId, format: "openai-chat" });
      expect(path.at(-1)?.id).toBe(finalReply.entryId);
      expect(now.messages).toEqual([
        ...sentContext.messages,
        { role: "assistant", content: "Meetings 9-12 closed the plan. MARK-ANSWER-3" },
      ]);
    } finally {
      await d.close();
    }
  });
});

describe("the agent loop writes the daemon's summaries with its own model", () => {
  it("threshold compactions and an overflow recovery with no summarizer settings: the summaries come from the agent's model", {
    timeout: 120_000,
  }, async () => {
    // Only compaction settings: the daemon is told nothing about a summarizer.
    const home = dirs.make("bc-agent-loop-own-model-");
    writeFileSync(
      join(home, "settings.json"),
      JSON.stringify({ compaction: { reserveTokens: RESERVE, keepRecentTokens: KEEP, prune: { enabled: false } } }),
    );
    const d = await startDaemon({ home, env: { OPENAI_API_KEY: "test-key" }, initialize: false });
    try {
      const script: FakeReply[] = [
        reply.toolCalls([{ name: "ls", arguments: { path: "notes" } }]),
        ...[1, 2, 3, 4].map(readNote),
        reply.text("Meetings 1-4 were about deployment steps. MARK-ANSWER-1"),
        ...[5, 6, 7, 8].map(readNote),
        reply.error(400, OVERFLOW_ERROR, { type: "invalid_request_error", code: "context_length_exceeded" }),
        reply.text("Meetings 5-8 assigned owners. MARK-ANSWER-2"),
      ];
      const agentRequests: RecordedRequest[] = [];
      const summaryRequests: RecordedRequest[] = [];
      const before = fake.requests.length;
      fake.setHandler((request) => {
        // The agent's own calls offer tools; the daemon's summary requests (through the loop) do not.
        if (request.body?.tools === undefined) {
          summaryRequests.push(request);
          return reply.text(`## Goal\nSummary ${summaryRequests.length} written by the agent's own model.`);
        }
        agentRequests.push(request);
        return script.shift() ?? reply.serverError("the test script has no reply left");
      });
      const openai = new OpenAI({ baseURL: fake.baseURL, apiKey: "test-key", maxRetries: 0 });
      const purposes: string[] = [];
      answerSummaryRequests(d.client, { openai, model: AGENT_MODEL }, (event) => purposes.push(event.purpose));
      await d.client.initialize({ clientInfo: { name: "agent-loop-test" } });

      const { sessionId } = await openSession(d.client, { cwd: workspace, provider: "openai-compatible", model: AGENT_MODEL });
      const inbox = new Inbox([
        "Summarize meetings 1 to 4 (list the notes folder first). MARK-PROMPT-1",
        "Now meetings 5 to 8. MARK-PROMPT-2",
      ]);
      inbox.close();
      const result = await runAgentLoop(
        {
          daemon: d.client,
          sessionId,
          openai,
          model: AGENT_MODEL,
          contextWindow: WINDOW,
          tools: workspaceTools(workspace),
          systemPrompt: "You answer questions about meeting notes. Read them with the tools.",
        },
        inbox,
      );
      expect(result).toMatchObject({ ok: true, failures: 0, unsent: [] });

      const { jobs } = await d.client.request(CompactionStatusRequest, { sessionId, limit: 50 });
      const committed = jobs.filter((job) => job.state === "committed");
      expect(committed.filter((job) => job.reason === "threshold").length).toBeGreaterThanOrEqual(1);
      expect(committed.filter((job) => job.reason === "overflow")).toHaveLength(1);
      // Every compaction was written by the agent's model, asked through model/complete.
      for (const job of committed) expect(job.summarizer).toBe(`client:${AGENT_MODEL}`);
      const { entries } = await d.client.request(SessionPath, { sessionId });
      const compactions = entries.filter((entry): entry is CompactionEntry => entry.type === "compaction");
      expect(compactions.length).toBeGreaterThanOrEqual(1);
      for (const compaction of compactions) {
        expect(compaction.summary).toMatch(/Summary \d+ written by the agent's own model\./);
        expect(compaction.details).toMatchObject({ summarizer: `client:${AGENT_MODEL}` });
      }
      expect(summaryRequests.length).toBeGreaterThanOrEqual(committed.length);
      expect(purposes.length).toBe(summaryRequests.length);
      for (const request of summaryRequests) {
        expect(request.body?.model).toBe(AGENT_MODEL);
        expect(request.headers.authorization).toBe("Bearer test-key");
        expect(request.body?.messages?.[0]).toMatchObject({ role: "system", content: SUMMARIZATION_SYSTEM_PROMPT });
      }
      // No other model was asked for anything.
      const seen = fake.requests.slice(before);
      expect(seen.length).toBe(agentRequests.length + summaryRequests.length);
      expect(seen.every((request) => request.body?.model === AGENT_MODEL)).toBe(true);
    } finally {
      await d.close();
    }
  });
});

function runLoopCli(args: readonly string[], home: string, env: Record<string, string> = {}) {
  return runNodeProgram(LOOP_MAIN, args, {
    env: { ...process.env, BASE_CONTEXT_HOME: home, ...storeEnvFor(home), OPENAI_API_KEY: "test-key", ...env },
    timeoutMs: 90_000,
  });
}

describe("the agent loop command", () => {
  it("runs prompts end to end: answers on stdout, each turn and compaction on stderr, exit 0", { timeout: 120_000 }, async () => {
    const home = daemonHome();
    scriptModel([
      reply.toolCalls([{ name: "ls", arguments: {} }], { text: "Let me look around." }),
      ...[1, 2, 3, 4].map(readNote),
      reply.text("CLI answer one"),
      ...[5, 6].map(readNote),
      reply.text("CLI answer two"),
    ]);
    const run = await runLoopCli(
      [
        "--base-url",
        fake.baseURL,
        "--model",
        AGENT_MODEL,
        "--context-window",
        String(WINDOW),
        "--cwd",
        workspace,
        "Read meetings 1 to 4.",
        "Then 5 and 6.",
      ],
      home,
    );

    expect(run.stdout).toBe("CLI answer one\nCLI answer two\n");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("[session] ");
    expect(run.stderr).toContain("[user] Read meetings 1 to 4.");
    expect(run.stderr).toContain("[model] calls ls(); says: Let me look around.");
    expect(run.stderr).toContain('[tool] read(path="notes/note-01.md") → ');
    expect(run.stderr).toContain("[turn/end] followUp continue");
    expect(run.stderr).toMatch(
      /\[turn\/end\] followUp continue \(context \d+ \/ threshold 1800 tokens, 1 prompt queued\)\n\[user\] Then 5 and 6\./,
    );
    expect(run.stderr).toMatch(/\[compaction\] threshold compaction started/);
    expect(run.stderr).toMatch(/\[compaction\] committed by openai:fake-summarizer: \d+ messages summarized/);
    expect(run.stderr).toContain("[turn/end] followUp none");
    expect(run.stderr).toMatch(/\[done\] 9 model calls, [1-9]\d* compaction\(s\), 0 failed; session /);

    // Everything went through the daemon: the session is there, with the tool results.
    const d = await startDaemon({ home });
    try {
      const { sessions } = await d.client.request(SessionList, {});
      expect(sessions).toHaveLength(1);
      const { entries } = await d.client.request(SessionPath, { sessionId: sessions[0]!.id });
      expect(entries.filter((entry) => entry.type === "message" && entry.message.role === "toolResult")).toHaveLength(7);
      expect(entries.some((entry) => entry.type === "compaction")).toBe(true);
    } finally {
      await d.close();
    }
  });

  it("stops at a model error that is not an overflow: the error stored and on stderr, nothing on stdout, exit 1", {
    timeout: 120_000,
  }, async () => {
    const home = daemonHome();
    scriptModel([reply.badRequest("Unsupported parameter: 'tools'.")]);
    const run = await runLoopCli(["--base-url", fake.baseURL, "--model", AGENT_MODEL, "--cwd", workspace, "Hello?"], home);

    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/\[stopped\] the model call failed: 400 .*Unsupported parameter/);
    expect(run.stderr).toMatch(/\[done\] 1 model calls, 0 compaction\(s\), 1 failed; session /);

    const d = await startDaemon({ home });
    try {
      const { sessions } = await d.client.request(SessionList, {});
      const { entries } = await d.client.request(SessionPath, { sessionId: sessions[0]!.id });
      expect(entries.at(-1)).toMatchObject({
        type: "message",
        message: { role: "assistant", stopReason: "error", errorMessage: expect.stringContaining("Unsupported parameter") },
      });
    } finally {
      await d.close();
    }
  });

  it.each([
    [["--model", AGENT_MODEL, "hi"], "missing --base-url URL"],
    [
      ["--base-url", "http://127.0.0.1:9/v1", "--model", AGENT_MODEL, "--context-window", "lots", "hi"],
      '--context-window must be a positive integer, got "lots"',
    ],
    [["--base-url", "http://127.0.0.1:9/v1", "--model", AGENT_MODEL, "--window", "10", "hi"], "Unknown option '--window'"],
    [["--base-url", "http://127.0.0.1:9/v1", "--model", AGENT_MODEL], "give at least one prompt"],
    // Smaller than the reserve the user set (compaction.reserveTokens): the threshold would be negative.
    [
      ["--base-url", "http://127.0.0.1:9/v1", "--model", AGENT_MODEL, "--context-window", "300", "hi"],
      "--context-window 300 is too small: the daemon keeps 16384 tokens",
    ],
  ])("rejects %j with a clear message and exit code 2", async (args, message) => {
    const home = dirs.make("bc-agent-loop-usage-");
    writeFileSync(join(home, "settings.json"), JSON.stringify({ compaction: { reserveTokens: 16_384 } }));
    const run = await runLoopCli(args, home);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain("Run with --help for usage.");
  });
});
