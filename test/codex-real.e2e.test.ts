/**
 * Real Codex sessions: the real `codex exec` (pinned @openai/codex) talks to a local fake
 * Responses API server for two runs of the same session: the first reads a file, patches it and
 * runs a failing command; the second starts with Codex's own compaction (its context passed
 * `model_auto_compact_token_limit`) and appends to the same rollout. The rollout it wrote is
 * imported, then imported again after the second run (only the new lines are added), and the
 * imported session is shown, drawn, searched, compacted and exported with the CLI.
 */
import type { RetentionReport } from "@base-context/protocol";
import {
  ContextBuild,
  SessionImport,
  SessionPath,
  type SessionEntry,
  type ToolResultMessage,
} from "@base-context/protocol";
import { computeFileLists, createFileOps, extractFileOpsFromMessage } from "@base-context/core";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CODEX_FAKE_MODEL,
  CODEX_FAKE_PROVIDER,
  codexBinary,
  codexExec,
  rolloutFiles,
  writeCodexHome,
  type CodexBinary,
  type CodexSetup,
} from "./support/codex-exec.js";
import { startDaemon, type TestDaemon } from "./support/daemon.js";
import { item, startFakeResponses, type FakeResponses } from "./support/fake-openai-responses.js";
import { runCli } from "./support/run-cli.js";
import { tempDirs } from "./support/temp-dir.js";

const dirs = tempDirs();

const PATCH = ["apply_patch <<'PATCH'", "*** Begin Patch", "*** Update File: notes.md", "@@", "-helo world", "+hello world", "*** End Patch", "PATCH"].join("\n");
const CODEX_SUMMARY = "CODEX-SUMMARY: notes.md had a typo (helo) and was patched; `ls missing-dir` failed with exit 2.";

describe("real Codex sessions", () => {
  let codex: CodexBinary;
  let launcher: string;
  let fake: FakeResponses;
  let daemon: TestDaemon;
  let setup: CodexSetup;
  let rollout: string;
  let firstRunLines: number;
  /** The rollout as the first run left it (one turn), before the second run appends to it. */
  let firstRun: string;

  beforeAll(async () => {
    codex = await codexBinary();
    if ("skip" in codex) return;
    launcher = codex.path;
    fake = await startFakeResponses();
    const root = dirs.make("bc-codex-");
    setup = { codexHome: join(root, "codex-home"), cwd: join(root, "project"), baseURL: fake.baseURL, autoCompactTokenLimit: 5000 };
    writeCodexHome(setup);
    writeFileSync(join(setup.cwd, "notes.md"), "helo world\n");
    fake.enqueue(
      [item.reasoning("Reading the notes before changing them."), item.functionCall("exec_command", { cmd: "cat notes.md" }, "call_read")],
      [item.functionCall("exec_command", { cmd: PATCH }, "call_patch")],
      [item.functionCall("exec_command", { cmd: "ls missing-dir" }, "call_fail")],
      // The context Codex measures now passes its compaction limit: the next run compacts first.
      { items: [item.message("Fixed the typo in notes.md; missing-dir does not exist.")], inputTokens: 9000 },
    );
    const first = await codexExec(launcher, setup, "Fix the typo in notes.md, then list missing-dir.");
    expect(first.code, first.stderr).toBe(0);
    [rollout] = rolloutFiles(setup.codexHome) as [string];
    firstRunLines = readFileSync(rollout, "utf8").split("\n").filter((line) => line.trim()).length;
    firstRun = join(root, "first-run.jsonl");
    copyFileSync(rollout, firstRun);
    daemon = await startDaemon();
  }, 20 * 60_000);

  afterAll(async () => {
    await daemon?.close();
    await fake?.close();
    dirs.cleanup();
  });

  const pathEntries = async (sessionId: string): Promise<SessionEntry[]> =>
    (await daemon.client.request(SessionPath, { sessionId })).entries as SessionEntry[];

  it("Codex really ran: it patched the file and wrote one rollout", async (ctx) => {
    if ("skip" in codex) return ctx.skip(codex.skip);
    expect(readFileSync(join(setup.cwd, "notes.md"), "utf8")).toBe("hello world\n");
    expect(rolloutFiles(setup.codexHome)).toHaveLength(1);
    expect(fake.requests.filter((request) => request.path === "/v1/responses")).toHaveLength(4);
  });

  let sessionId: string;
  it("imports the rollout: the prompt, tool calls paired with results, the failing command as an error, the files", async (ctx) => {
    if ("skip" in codex) return ctx.skip(codex.skip);
    const result = await daemon.client.request(SessionImport, { path: rollout });
    sessionId = result.session.id;
    expect(result.format).toBe("codex-jsonl");
    expect(result.skippedLines ?? []).toEqual([]);
    expect(result.session.cwd).toBe(setup.cwd);
    const entries = await pathEntries(sessionId);
    const messages = entries.flatMap((entry) => (entry.type === "message" ? [entry.message] : []));
    const users = messages.filter((message) => message.role === "user");
    expect(users).toHaveLength(1);
    expect(JSON.stringify(users[0]!.content)).toContain("Fix the typo in notes.md");
    // Codex's own context (environment, instructions) is kept, marked as not the user's words.
    const injected = entries.flatMap((entry) => (entry.type === "custom_message" ? [[entry.customType, entry.details]] : []));
    expect(injected).toEqual([
      ["injected-text", { source: "codex", kind: "developer" }],
      ["injected-text", { source: "codex", kind: "environment_context" }],
    ]);

    const calls = messages.flatMap((message) => (message.role === "assistant" ? message.content.filter((block) => block.type === "toolCall") : []));
    const results = messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
    expect(calls.map((call) => call.id)).toEqual(["call_read", "call_patch", "call_fail"]);
    expect(results.map((result) => [result.toolCallId, result.toolName, result.isError])).toEqual([
      ["call_read", "exec_command", false],
      ["call_patch", "exec_command", false],
      ["call_fail", "exec_command", true],
    ]);
    expect(JSON.stringify(results[0]!.content)).toContain("helo world");
    expect(JSON.stringify(results[2]!.content)).toContain("missing-dir");
    const thinking = messages.flatMap((message) => (message.role === "assistant" ? message.content : [])).filter((block) => block.type === "thinking");
    expect(thinking).toEqual([expect.objectContaining({ thinking: "Reading the notes before changing them." })]);
    expect(entries.find((entry) => entry.type === "model_change")).toMatchObject({ provider: CODEX_FAKE_PROVIDER, modelId: CODEX_FAKE_MODEL });

    const ops = createFileOps();
    for (const message of messages) extractFileOpsFromMessage(message, ops);
    expect(computeFileLists(ops)).toEqual({ readFiles: [], modifiedFiles: ["notes.md"] });
  });

  it("compacted offline inside its one turn, the first run's summary has the user's prompt as its goal, not Codex's context", async (ctx) => {
    if ("skip" in codex) return ctx.skip(codex.skip);
    const home = dirs.make("bc-codex-first-run-");
    const imported = await runCli(["import", firstRun], { home });
    expect(imported.code, imported.stderr).toBe(0);
    // Before the cut only Codex's developer and environment messages remain: the history part of a split turn.
    const compact = await runCli(["compact", sessionId, "--keep-recent", "10", "--json"], { home, timeoutMs: 60_000 });
    expect(compact.code, compact.stderr).toBe(0);
    const report = JSON.parse(compact.stdout) as { entry?: { summary: string; details: { summarizer: string } } };
    expect(report.entry?.details.summarizer).toBe("extractive");
    const summary = report.entry!.summary;
    expect(summary).toContain("**Turn Context (split turn):**");
    const goal = summary.slice(summary.indexOf("## Goal"), summary.indexOf("## Constraints"));
    expect(goal).toContain("Current task: Fix the typo in notes.md, then list missing-dir.");
    expect(goal).not.toContain("(not stated)");
  }, 120_000);

  it("after a second run that starts with Codex's compaction, a re-import appends only the new lines", async (ctx) => {
    if ("skip" in codex) return ctx.skip(codex.skip);
    const before = await pathEntries(sessionId);
    fake.enqueue([item.message(CODEX_SUMMARY)], [item.message("Nothing left to do: notes.md reads hello world.")]);
    const second = await codexExec(launcher, setup, "Is anything left to do?", { resume: true });
    expect(second.code, second.stderr).toBe(0);
    expect(readFileSync(rollout, "utf8").split("\n").filter((line) => line.trim()).length).toBeGreaterThan(firstRunLines);

    const again = await daemon.client.request(SessionImport, { path: rollout });
    expect(again.session.id).toBe(sessionId);
    expect(again.updated).toBe(true);
    const after = await pathEntries(sessionId);
    expect(again.addedEntries).toBe(after.length - before.length);
    expect(after.slice(0, before.length).map((entry) => entry.id)).toEqual(before.map((entry) => entry.id));
    expect(new Set(after.map((entry) => entry.id)).size).toBe(after.length);

    // Importing once more adds nothing.
    const third = await daemon.client.request(SessionImport, { path: rollout });
    expect(third.addedEntries).toBe(0);
    expect(third.entryCount).toBe(again.entryCount);

    const compaction = after.find((entry) => entry.type === "compaction");
    // Codex's summary, without the preamble Codex puts before it for the next model (kept in the details).
    expect(compaction).toMatchObject({ type: "compaction", summary: CODEX_SUMMARY, details: { source: "codex", preamble: expect.any(String) } });
    // Checked at import against the context it replaced, as Claude Code's are: the summary keeps the
    // user's request, and says the listing failed without the error's own words.
    const { retention } = compaction!.details as { retention?: RetentionReport };
    expect(retention?.requests).toEqual({ kept: 1, total: 1 });
    expect(retention?.errors).toEqual({ kept: 0, total: 1 });
    expect(retention?.missing.errors).toEqual(["ls: cannot access 'missing-dir': No such file or directory"]);
    const context = await daemon.client.request(ContextBuild, { sessionId });
    expect(context.compactionId).toBe(compaction!.id);
    // What Codex continued from: its summary, the user's kept request, then the new turn.
    const text = JSON.stringify(context.messages);
    expect(text).toContain("Fix the typo in notes.md");
    expect(text).toContain("Is anything left to do?");
    expect(text).toContain("Nothing left to do");
    // The first run's tool calls and outputs are behind the summary.
    expect(context.messages.map((message) => message.role)).not.toContain("toolResult");
  }, 180_000);

  it("shows, draws, searches, compacts and exports the imported session with the CLI", async (ctx) => {
    if ("skip" in codex) return ctx.skip(codex.skip);
    const home = daemon.home;
    const show = await runCli(["show", sessionId], { home });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain("Is anything left to do?");
    expect(show.stdout).toContain("CODEX-SUMMARY");

    const tree = await runCli(["tree", sessionId, "--print", "--all"], { home });
    expect(tree.code, tree.stderr).toBe(0);
    expect(tree.stdout).toContain("Fix the typo in notes.md");
    expect(tree.stdout).toMatch(/compaction/i);

    const search = await runCli(["sessions", "typo notes", "--json"], { home });
    expect(search.code, search.stderr).toBe(0);
    expect(search.stdout).toContain(sessionId);

    const compact = await runCli(["compact", sessionId, "--keep-recent", "10", "--json"], { home, timeoutMs: 60_000 });
    expect(compact.code, compact.stderr).toBe(0);
    const report = JSON.parse(compact.stdout) as { sessionId: string; status: string; entry?: { type: string; firstKeptEntryId: string } };
    expect(report.sessionId).toBe(sessionId);
    expect(report).toMatchObject({ status: "committed", entry: { type: "compaction" } });

    const out = join(dirs.make("bc-codex-export-"), "codex.jsonl");
    const exported = await runCli(["export", sessionId, "--output", out], { home });
    expect(exported.code, exported.stderr).toBe(0);
    const lines = readFileSync(out, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    // Export writes pi's format: a pi header, then the entries.
    expect(lines[0]).toMatchObject({ type: "session", version: 3, id: sessionId, cwd: setup.cwd });
    expect(lines.filter((line) => line.type === "compaction")).toHaveLength(2);
    expect(lines.filter((line) => line.type === "custom_message").every((line) => line.customType === "injected-text")).toBe(true);
  }, 120_000);
});
