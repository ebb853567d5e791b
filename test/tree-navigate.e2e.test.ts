/**
 * Tree navigation over real stdio (docs/design.md#tree-navigation, issue 5): the daemon summarizes the branch
 * being left with the (fake) OpenAI-compatible model configured in the temporary home's
 * settings.json, and commits a branch_summary entry under the new leaf.
 */
import {
  ContextBuild,
  EntryAppend,
  EntryGet,
  SessionFork,
  SessionGet,
  SessionTree,
  TreeDidNavigate,
  TreeNavigate,
  type BaseContextClient,
  type EntryInput,
  type SessionEntry,
} from "@base-context/protocol";
import { BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT, SUMMARIZATION_SYSTEM_PROMPT } from "@base-context/core";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { startDaemon, type TestDaemon } from "./support/daemon.js";
import { defaultSummary, reply, startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./support/fake-openai.js";
import { waitFor } from "./support/wait.js";
import { appendAll, assistant, createSession, rpcError, toolResult, user } from "./fixtures/e2e.js";

interface Harness {
  d: TestDaemon;
  client: BaseContextClient;
  fake: FakeOpenAI;
  /** Chat requests the fake model received during the current test. */
  calls(): RecordedRequest[];
}

/** Daemons start slowly: one for the whole file, a fresh session per test. */
let shared: Harness | undefined;
let callsBefore = 0;
const cleanups: (() => Promise<void> | void)[] = [];

/** A daemon whose summarizer is the fake model (no fallback: a model failure must show). */
async function harness(): Promise<Harness> {
  if (shared) return shared;
  const fake = await startFakeOpenAI();
  cleanups.push(() => fake.close());
  const home = mkdtempSync(join(tmpdir(), "bc-tree-e2e-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const summarizer = { provider: "openai", baseURL: fake.baseURL, model: "fake-summarizer", maxRetries: 0, fallback: false };
  writeFileSync(join(home, "settings.json"), JSON.stringify({ summarizer }));
  const d = await startDaemon({ home, env: { OPENAI_API_KEY: "test-key" } });
  cleanups.push(() => d.close());
  shared = { d, client: d.client, fake, calls: () => fake.chatRequests().slice(callsBefore) };
  return shared;
}

beforeEach(() => {
  callsBefore = shared?.fake.chatRequests().length ?? 0;
});
/** Listeners a test registered on the shared client. */
const cleanupAfterTest: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanupAfterTest.splice(0)) cleanup();
  shared?.fake.setHandler((request) => reply.text(defaultSummary(request.body)));
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const readCall = (id: string, path: string) => ({ id, name: "read", arguments: { path } });
const editCall = (id: string, path: string) => ({ id, name: "edit", arguments: { path } });
const writeCall = (id: string, path: string) => ({ id, name: "write", arguments: { path } });

/** The user prompt of a recorded chat request. */
function promptOf(request: RecordedRequest | undefined): string {
  const content = request?.body?.messages?.find((message) => message.role === "user")?.content;
  if (typeof content !== "string") throw new Error("no user prompt in the recorded request");
  return content;
}

/**
 *   u1 ─ a1 ─ t1 ─ a2 ─ u2 ─ a3 ─ u3 ─ a4 (leaf)
 */
async function linearSession(client: BaseContextClient) {
  const sessionId = await createSession(client, "/home/me/project");
  const [u1, a1, t1, a2, u2, a3, u3, a4] = await appendAll(client, sessionId, [
    user("fix the login bug in auth.ts"),
    assistant("reading the module", { toolCalls: [readCall("c1", "src/auth.ts")] }),
    toolResult("c1", "read", "export function login() { return false; }"),
    assistant("fixed the comparison", { toolCalls: [editCall("c2", "src/auth.ts")] }),
    user("try redis for sessions"),
    assistant("redis store added", { toolCalls: [writeCall("c3", "src/cache.ts")] }),
    user("add a ttl"),
    assistant("ttl set to one hour", { toolCalls: [editCall("c4", "src/cache.ts")] }),
  ]);
  return { sessionId, u1: u1!, a1: a1!, t1: t1!, a2: a2!, u2: u2!, a3: a3!, u3: u3!, a4: a4! };
}

async function entryCount(client: BaseContextClient, sessionId: string): Promise<number> {
  return (await client.request(SessionGet, { sessionId })).entryCount;
}

describe("tree/navigate with a branch summary", () => {
  it("goes back to an earlier user message: summarizes what came after it, returns its text, hangs the summary under its parent", async () => {
    const { client, calls, fake } = await harness();
    const s = await linearSession(client);
    const notifications: unknown[] = [];
    const progress: unknown[] = [];
    const subscriptions = [
      client.onNotification(TreeDidNavigate, (params) => notifications.push(params)),
      client.onProgress("nav-progress", (value) => progress.push(value)),
    ];
    cleanupAfterTest.push(() => subscriptions.forEach((subscription) => subscription.dispose()));

    const result = await client.request(TreeNavigate, {
      sessionId: s.sessionId,
      targetId: s.u2.id,
      summarize: true,
      workDoneToken: "nav-progress",
    });

    expect(result.status).toBe("moved");
    expect(result.editorText).toBe("try redis for sessions");
    const summary = result.summaryEntry!;
    expect(summary).toMatchObject({ type: "branch_summary", parentId: s.a2.id, fromId: s.a4.id });
    expect(result.leafId).toBe(summary.id);
    expect((await client.request(SessionGet, { sessionId: s.sessionId })).leafId).toBe(summary.id);

    // The model saw the entries after the selected message, and not the message itself.
    const [request] = calls();
    expect(calls()).toHaveLength(1);
    expect(request!.body).toMatchObject({ model: "fake-summarizer", max_tokens: 2048 });
    expect(request!.body?.messages?.[0]).toEqual({ role: "system", content: SUMMARIZATION_SYSTEM_PROMPT });
    expect(promptOf(request)).toBe(
      "<conversation>\n" +
        '[Assistant]: redis store added\n\n[Assistant tool calls]: write(path="src/cache.ts")\n\n' +
        '[User]: add a ttl\n\n[Assistant]: ttl set to one hour\n\n[Assistant tool calls]: edit(path="src/cache.ts")' +
        "\n</conversation>\n\n" +
        BRANCH_SUMMARY_PROMPT,
    );

    expect(summary.type === "branch_summary" && summary.summary).toMatch(
      new RegExp(`^${escapeRegExp(BRANCH_SUMMARY_PREAMBLE)}## Goal\\nFake summary of: add a ttl`),
    );
    expect(summary.type === "branch_summary" && summary.summary.endsWith("<modified-files>\nsrc/cache.ts\n</modified-files>")).toBe(true);
    expect(summary.type === "branch_summary" && summary.details).toEqual({
      readFiles: [],
      modifiedFiles: ["src/cache.ts"],
      summarizer: "openai:fake-summarizer",
      retention: result.retention,
    });
    expect(result.retention).toMatchObject({ files: { kept: 1, total: 1 } });

    await waitFor(() => notifications.length === 1 && progress.length >= 2);
    expect(notifications).toEqual([
      { sessionId: s.sessionId, oldLeafId: s.a4.id, leafId: summary.id, targetId: s.u2.id, summaryEntryId: summary.id },
    ]);
    expect(progress[0]).toMatchObject({ kind: "begin" });
    expect(progress).toContainEqual({
      kind: "report",
      message: `Summarizing 3 messages with openai:fake-summarizer at ${fake.baseURL.replace(/\/+$/, "")}`,
    });
    expect(progress[progress.length - 1]).toEqual({ kind: "end", message: "moved" });
  });

  it("puts the branch summary in the context after navigating", async () => {
    const { client } = await harness();
    const s = await linearSession(client);
    const { summaryEntry } = await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.u2.id, summarize: true });

    const context = await client.request(ContextBuild, { sessionId: s.sessionId });
    expect(context.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant", "branchSummary"]);
    expect(context.messages[4]).toMatchObject({
      role: "branchSummary",
      fromId: s.a4.id,
      summary: summaryEntry!.type === "branch_summary" ? summaryEntry!.summary : "",
    });

    const chat = await client.request(ContextBuild, { sessionId: s.sessionId, format: "openai-chat" });
    expect(JSON.stringify(chat.messages[chat.messages.length - 1])).toContain(
      "The following is a summary of a branch that this conversation came back from",
    );
  });

  it("navigates to the root user message with a summary: the summary becomes a root of its own", async () => {
    const { client, calls } = await harness();
    const s = await linearSession(client);
    const result = await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.u1.id, summarize: true });

    expect(result.editorText).toBe("fix the login bug in auth.ts");
    expect(result.summaryEntry).toMatchObject({ parentId: null, fromId: s.a4.id });
    expect(result.summaryEntry!.type === "branch_summary" && result.summaryEntry!.details).toEqual({
      readFiles: [],
      modifiedFiles: ["src/auth.ts", "src/cache.ts"],
      summarizer: "openai:fake-summarizer",
      retention: result.retention,
    });
    const prompt = promptOf(calls()[0]);
    expect(prompt).not.toContain("fix the login bug");
    expect(prompt).toContain("[User]: try redis for sessions");
    expect(prompt).not.toContain("export function login"); // tool results are left out

    const context = await client.request(ContextBuild, { sessionId: s.sessionId });
    expect(context.messages.map((message) => message.role)).toEqual(["branchSummary"]);
  });

  it("navigates to the root user message without a summary: the leaf goes before the root, nothing is written", async () => {
    const { client, calls } = await harness();
    const s = await linearSession(client);
    const before = await entryCount(client, s.sessionId);
    const result = await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.u1.id });

    expect(result).toEqual({ status: "moved", leafId: null, editorText: "fix the login bug in auth.ts" });
    expect((await client.request(SessionGet, { sessionId: s.sessionId })).leafId).toBeNull();
    expect(await entryCount(client, s.sessionId)).toBe(before);
    expect(calls()).toHaveLength(0);
    expect((await client.request(ContextBuild, { sessionId: s.sessionId })).messages).toEqual([]);
  });

  it("navigates to an assistant entry with a label and no summary: the label goes on the target", async () => {
    const { client, calls } = await harness();
    const s = await linearSession(client);
    const result = await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.a2.id, label: "auth fixed" });

    expect(result.status).toBe("moved");
    expect(result.summaryEntry).toBeUndefined();
    expect(result.editorText).toBeUndefined();
    const labelEntry = (await client.request(EntryGet, { sessionId: s.sessionId, entryId: result.leafId! })).entry;
    expect(labelEntry).toMatchObject({ type: "label", targetId: s.a2.id, label: "auth fixed", parentId: s.a2.id });
    const { nodes } = await client.request(SessionTree, { sessionId: s.sessionId, flat: true });
    expect(nodes!.find((node) => node.entry.id === s.a2.id)?.label).toBe("auth fixed");
    expect(calls()).toHaveLength(0);
  });

  it("moves to a descendant of the current leaf without a summary: nothing is left behind", async () => {
    const { client, calls } = await harness();
    const s = await linearSession(client);
    await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.a2.id });
    const before = await entryCount(client, s.sessionId);

    const result = await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.a4.id, summarize: true });
    expect(result).toEqual({ status: "moved", leafId: s.a4.id });
    expect(await entryCount(client, s.sessionId)).toBe(before);
    expect(calls()).toHaveLength(0);
  });

  it("is a no-op on the current leaf", async () => {
    const { client, calls } = await harness();
    const s = await linearSession(client);
    const result = await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.a4.id, summarize: true, label: "here" });
    expect(result).toEqual({ status: "unchanged", leafId: s.a4.id });
    expect(calls()).toHaveLength(0);
  });

  it("answers 'No content to summarize' without a model call when the branch holds no messages", async () => {
    const { client, calls } = await harness();
    const s = await linearSession(client);
    await appendAll(client, s.sessionId, [
      { type: "model_change", provider: "openai", modelId: "gpt-5" },
      { type: "thinking_level_change", thinkingLevel: "high" },
    ]);

    const result = await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.a4.id, summarize: true });
    expect(result.summaryEntry).toMatchObject({
      type: "branch_summary",
      summary: "No content to summarize",
      parentId: s.a4.id,
      details: { readFiles: [], modifiedFiles: [], summarizer: "none" },
    });
    expect(calls()).toHaveLength(0);
  });

  it("sends the custom instructions alone with replaceInstructions, and as 'Additional focus' otherwise", async () => {
    const { client, calls } = await harness();
    const sessionId = await createSession(client);
    const [u1, a1] = await appendAll(client, sessionId, [user("start"), assistant("ready")]);
    await appendAll(client, sessionId, [user("try plan B"), assistant("plan B failed: timeout")]);

    await client.request(TreeNavigate, {
      sessionId,
      targetId: a1!.id,
      summarize: true,
      customInstructions: "List only the errors, one per line.",
      replaceInstructions: true,
    });
    expect(promptOf(calls()[0])).toBe(
      "<conversation>\n[User]: try plan B\n\n[Assistant]: plan B failed: timeout\n</conversation>\n\nList only the errors, one per line.",
    );

    await appendAll(client, sessionId, [user("try plan C")]);
    await client.request(TreeNavigate, { sessionId, targetId: u1!.id, summarize: true, customInstructions: "the timeout" });
    expect(promptOf(calls()[1]).endsWith(`${BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: the timeout`)).toBe(true);
  });

  it("accumulates file lists across nested navigations (daemon-made summaries pass theirs on)", async () => {
    const { client } = await harness();
    const sessionId = await createSession(client);
    const [root, base] = await appendAll(client, sessionId, [
      user("set up the project"),
      assistant("done", { toolCalls: [readCall("r0", "package.json")] }),
    ]);
    // Branch A: writes the cache, then is left for the base with a summary.
    await appendAll(client, sessionId, [user("branch A"), assistant("cache written", { toolCalls: [writeCall("w1", "src/cache.ts")] })]);
    const first = await client.request(TreeNavigate, { sessionId, targetId: base!.id, summarize: true });
    // Branch B goes on after that summary, edits the database layer, and is left for the root.
    await appendAll(client, sessionId, [
      user("branch B"),
      assistant("db edited", { toolCalls: [editCall("e1", "src/db.ts"), readCall("r1", "src/db.test.ts")] }),
    ]);
    const second = await client.request(TreeNavigate, { sessionId, targetId: root!.id, summarize: true });

    expect(first.summaryEntry!.type === "branch_summary" && first.summaryEntry!.details).toMatchObject({
      readFiles: [],
      modifiedFiles: ["src/cache.ts"],
    });
    const details = second.summaryEntry!.type === "branch_summary" ? second.summaryEntry!.details : undefined;
    expect(details).toMatchObject({ readFiles: ["package.json", "src/db.test.ts"], modifiedFiles: ["src/cache.ts", "src/db.ts"] });
    const text = second.summaryEntry!.type === "branch_summary" ? second.summaryEntry!.summary : "";
    expect(
      text.endsWith(
        "<read-files>\npackage.json\nsrc/db.test.ts\n</read-files>\n\n<modified-files>\nsrc/cache.ts\nsrc/db.ts\n</modified-files>",
      ),
    ).toBe(true);
  });

  it("drops old messages that do not fit the budget but squeezes in the summary before them, and keeps every file", async () => {
    const { client, calls } = await harness();
    const sessionId = await createSession(client);
    const [u1, , , a2] = await appendAll(client, sessionId, [
      user("fix the login bug"),
      assistant("looking", { toolCalls: [readCall("r1", "src/auth.ts")] }),
      user(`old detail that will not fit: ${"lorem ipsum ".repeat(150)}`),
      assistant("old work", { toolCalls: [editCall("e1", "src/old.ts")] }),
    ]);
    // A side quest, left with a summary: the summary (S1) becomes part of the main line.
    await appendAll(client, sessionId, [user("side quest"), assistant("side done", { toolCalls: [writeCall("w1", "src/side.ts")] })]);
    const s1 = (await client.request(TreeNavigate, { sessionId, targetId: a2!.id, summarize: true })).summaryEntry!;
    const [u4, a4] = await appendAll(client, sessionId, [user("newest question"), assistant("newest answer")]);

    // Budget: the two newest messages fit; the summary does not, but is squeezed in (under 90 %).
    const tokens = async (entry: SessionEntry) => (await client.request(EntryGet, { sessionId, entryId: entry.id })).tokens!;
    const newest = (await tokens(u4!)) + (await tokens(a4!));
    const budget = newest + Math.floor((await tokens(s1)) / 2);
    expect(newest).toBeLessThan(0.9 * budget);

    const result = await client.request(TreeNavigate, {
      sessionId,
      targetId: u1!.id,
      summarize: true,
      // The default branchSummary.reserveTokens is capped at a quarter of a window this small: the budget is the rest.
      contextWindow: Math.ceil((budget * 4) / 3),
    });
    const prompt = promptOf(calls()[1]);
    expect(prompt).toContain("[User]: newest question");
    expect(prompt).toContain("[Assistant]: newest answer");
    expect(prompt).toContain("The following is a summary of a branch that this conversation came back from");
    expect(prompt).not.toContain("old detail that will not fit");
    expect(prompt).not.toContain("[Assistant]: looking");
    expect(result.summaryEntry!.type === "branch_summary" && result.summaryEntry!.details).toMatchObject({
      readFiles: ["src/auth.ts"],
      modifiedFiles: ["src/old.ts", "src/side.ts"],
    });
  });
});

describe("tree/navigate: cancellation, retries and errors", () => {
  it("leaves the session untouched when cancelled while the model is writing", async () => {
    const { client, fake, calls } = await harness();
    const s = await linearSession(client);
    fake.setHandler(() => reply.hang());
    const before = await entryCount(client, s.sessionId);
    const controller = new AbortController();

    const navigation = rpcError(
      client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.u2.id, summarize: true }, { signal: controller.signal }),
    );
    await waitFor(() => calls().length === 1);
    controller.abort();

    const error = await navigation;
    expect(error.code).toBe(-32800);
    await waitFor(() => calls()[0]!.disconnected, { message: "the model request was not aborted" });
    expect((await client.request(SessionGet, { sessionId: s.sessionId })).leafId).toBe(s.a4.id);
    expect(await entryCount(client, s.sessionId)).toBe(before);
  });

  it("returns the first result for a retried requestId without summarizing again", async () => {
    const { client, calls } = await harness();
    const s = await linearSession(client);
    const first = await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.u2.id, summarize: true, requestId: "nav-1" });
    const count = await entryCount(client, s.sessionId);

    const retry = await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.u2.id, summarize: true, requestId: "nav-1" });
    expect(retry).toEqual(first);
    expect(calls()).toHaveLength(1);
    expect(await entryCount(client, s.sessionId)).toBe(count);
  });

  it("answers entry_not_found for an unknown target and session_not_found for an unknown session", async () => {
    const { client } = await harness();
    const s = await linearSession(client);
    const missingEntry = await rpcError(client.request(TreeNavigate, { sessionId: s.sessionId, targetId: "deadbeef", summarize: true }));
    expect(missingEntry.code).toBe(-31998);
    expect(missingEntry.data?.code).toBe("entry_not_found");
    const missingSession = await rpcError(client.request(TreeNavigate, { sessionId: "nope", targetId: s.u1.id }));
    expect(missingSession.data?.code).toBe("session_not_found");
  });

  it("reports a model failure as -32803 and writes nothing (fallback off)", async () => {
    const { client, fake } = await harness();
    const s = await linearSession(client);
    fake.setHandler(() => reply.badRequest("Invalid model: fake-summarizer", "model_not_found"));
    const before = await entryCount(client, s.sessionId);
    const error = await rpcError(client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.u2.id, summarize: true }));
    expect(error.code).toBe(-32803);
    expect(error.message).toContain("Invalid model");
    expect(await entryCount(client, s.sessionId)).toBe(before);
  });
});

describe("session/fork and session/tree", () => {
  it("forks with the labels of the forked path", async () => {
    const { client } = await harness();
    const s = await linearSession(client);
    await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.a2.id, label: "auth fixed" });
    await client.request(TreeNavigate, { sessionId: s.sessionId, targetId: s.a4.id, label: "cache done" });
    const { session } = await client.request(SessionFork, { sessionId: s.sessionId, entryId: s.a3.id });

    const { nodes } = await client.request(SessionTree, { sessionId: session.id, flat: true });
    const labels = new Map(nodes!.filter((node) => node.label !== undefined).map((node) => [node.entry.id, node.label]));
    expect(labels).toEqual(new Map([[s.a2.id, "auth fixed"]]));
    expect(nodes!.some((node) => node.entry.id === s.a4.id)).toBe(false);
  });

  it("returns children in time order with labels, entry types and the current leaf marked", async () => {
    const { client } = await harness();
    const s = await linearSession(client);
    const compaction: EntryInput = { type: "compaction", summary: "## Goal\nlogin", firstKeptEntryId: s.u2.id, tokensBefore: 1234 };
    await client.request(EntryAppend, { sessionId: s.sessionId, entry: compaction });
    const { summaryEntry } = await client.request(TreeNavigate, {
      sessionId: s.sessionId,
      targetId: s.a2.id,
      summarize: true,
      label: "back",
    });
    const late = (await client.request(EntryAppend, { sessionId: s.sessionId, entry: user("a newer sibling") })).entry;

    const { roots, leafId } = await client.request(SessionTree, { sessionId: s.sessionId });
    expect(leafId).toBe(late.id);
    let node = roots[0]!;
    while (node.entry.id !== s.a2.id) node = node.children[0]!;
    expect(node.children.map((child) => child.entry.type)).toEqual(["message", "branch_summary"]);
    const summaryNode = node.children[1]!;
    expect(summaryNode).toMatchObject({ entry: { id: summaryEntry!.id }, label: "back" });
    expect(summaryNode.children[0]!.children[0]).toMatchObject({ entry: { id: late.id }, isLeaf: true });
    let onOldBranch = node.children[0]!;
    while (onOldBranch.children.length > 0) onOldBranch = onOldBranch.children[0]!;
    expect(onOldBranch.entry.type).toBe("compaction");
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
