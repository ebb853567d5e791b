/**
 * Claude Code transcripts, on fixtures written from the format's public description
 * (sessions/fixtures/claude-code/): every line type, a retry branch, a side chain in the main
 * file, a subagent's own file, a compaction, a bad line; and re-imports that add only what is new.
 */
import type { RetentionReport, SessionEntry } from "@base-context/protocol";
import {
  buildContext,
  computeFileLists,
  createFileOps,
  estimateContextTokens,
  extractFileOpsFromMessage,
  INJECTED_TEXT_TYPE,
  probeMessages,
} from "@base-context/core";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDirs } from "../../../../../../test/support/temp-dir.js";
import { AppError } from "../../../errors.js";
import { SessionStore } from "../../../store/index.js";
import { FakeCounter, sequentialIds } from "../../fixtures/test-helpers.js";
import { SessionService } from "../../service.js";
import { detectFormat } from "../registry.js";

const dirs = tempDirs();
const here = dirname(fileURLToPath(import.meta.url));
const SESSION = "1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";
const MAIN = join(here, "..", "..", "fixtures", "claude-code", `${SESSION}.jsonl`);
const SUBAGENT = join(here, "..", "..", "fixtures", "claude-code", SESSION, "subagents", "agent-a7c1e9f.jsonl");
const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

describe("Claude Code transcripts (claude-code-jsonl)", () => {
  let folder: string;
  let store: SessionStore;
  let sessions: SessionService;
  const entriesOf = (sessionId: string): SessionEntry[] => [...store.entriesInOrder(sessionId)].flat().map((stored) => stored.entry);
  const byId = (sessionId: string) => new Map(entriesOf(sessionId).map((entry) => [entry.id, entry]));
  const pathOf = (sessionId: string) => store.path(sessionId).map((stored) => stored.entry);

  beforeEach(() => {
    folder = dirs.make();
    const ids = sequentialIds();
    store = new SessionStore({ path: join(folder, "main.db"), ids, checkpoints: "sqlite" });
    sessions = new SessionService(store, new FakeCounter(), { ids, import: { batchSize: 7 } });
  });
  afterEach(async () => {
    await store.close();
    dirs.remove(folder);
  });

  it("is detected from the first lines, and a file of no known format is refused naming the formats", async () => {
    const lines = readFileSync(MAIN, "utf8").split("\n").slice(0, 20);
    expect(detectFormat(lines)?.name).toBe("claude-code-jsonl");
    expect(detectFormat(['{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}'])?.name).toBe("pi-jsonl");
    expect(detectFormat(['{"hello":"world"}'])).toBeUndefined();
    const refused = await sessions.import({ content: '{"hello":"world"}\n' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).message).toMatch(/expected the pi session header.*; nor is it another format this build reads \(claude-code-jsonl, codex-jsonl\)/);
    const result = await sessions.import({ path: MAIN });
    expect(result.format).toBe("claude-code-jsonl");
  });

  it("maps every line type: metadata counted, a bad line skipped with its number, unknown types kept or counted", async () => {
    const result = await sessions.import({ path: MAIN, format: "claude-code-jsonl" });
    expect(result.session.id).toBe(SESSION);
    expect(result.session.cwd).toBe("/home/dev/shop");
    expect(result.session.createdAt).toBe("2026-03-01T10:00:04.000Z");
    expect(result.ignoredLines).toEqual({ "file-history-snapshot": 1, progress: 2, "queue-operation": 1, "system turn_duration": 1, "x-future-metadata": 1 });
    expect(result.skippedLines).toEqual([{ line: 33, reason: expect.stringMatching(/^invalid JSON.*; bridged/), bridgedTo: u(32) }]);
    // The title line names the session first; the later custom title renames it.
    expect(result.session.name).toBe("Parser fix");
    const entries = byId(SESSION);
    expect(entries.get(u(34))).toMatchObject({ type: "custom", customType: "claude-code.attachment", data: { attachment: { path: "notes.md" } } });
    expect(entries.get(u(20))).toMatchObject({ type: "custom", customType: "claude-code.system", data: { subtype: "stop_hook_summary" } });
    // 32 conversation lines, one of them split (text + reminder + image → user, injected), the boundary and summary as one.
    expect(result.entryCount).toBe(entriesOf(SESSION).length);
    expect([...entries.keys()].filter((id) => id.includes("."))).toEqual([`${u(17)}.1`, `${u(17)}.2`, `${SESSION}.title-2`]);
  });

  it("keeps the tree: real branches stay, parallel tool results go in line, side chains are their own root", async () => {
    await sessions.import({ path: MAIN });
    const entries = byId(SESSION);
    // Children of skipped progress lines hang under the progress line's own parent.
    expect(entries.get(u(4))!.parentId).toBeNull();
    expect(entries.get(u(8))!.parentId).toBe(u(6));
    // Claude Code hangs the Read result under the Read call: it goes after the parallel Grep call.
    expect(entries.get(u(9))!.parentId).toBe(u(8));
    expect(entries.get(u(10))!.parentId).toBe(u(9));
    // The retried answer is a branch beside the kept one, from the split user line's last part.
    expect(entries.get(u(18))!.parentId).toBe(`${u(17)}.2`);
    expect(entries.get(u(19))!.parentId).toBe(`${u(17)}.2`);
    expect(entries.get(u(23))!.parentId).toBeNull();
    expect(entries.get(u(24))!.parentId).toBe(u(23));
    // The leaf is the main conversation's last entry, not the side chain's nor the title.
    expect((await sessions.get({ sessionId: SESSION })).leafId).toBe(u(35));
    const tree = await sessions.tree({ sessionId: SESSION });
    expect(tree.roots.map((root) => root.entry.id)).toEqual([u(4), u(23)]);
  });

  it("turns tool_use, tool_result, thinking and usage into pi's shapes", async () => {
    await sessions.import({ path: MAIN });
    const entries = byId(SESSION);
    expect(entries.get(u(5))).toMatchObject({
      type: "message",
      message: {
        role: "assistant",
        content: [{ type: "thinking", thinking: "Look at the parser first.", thinkingSignature: "sig5" }],
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        usage: { input: 1200, output: 80, cacheRead: 5000, cacheWrite: 300, totalTokens: 6580 },
      },
    });
    expect(entries.get(u(13))).toMatchObject({
      message: { stopReason: "toolUse", content: [{ type: "toolCall", id: "toolu_bash", name: "Bash", arguments: { command: "npm test" } }] },
    });
    expect(entries.get(u(14))).toMatchObject({
      message: { role: "toolResult", toolCallId: "toolu_bash", toolName: "Bash", isError: true, content: [{ type: "text", text: expect.stringMatching(/^Exit code 1/) }] },
    });
    expect(entries.get(u(10))).toMatchObject({ message: { role: "toolResult", toolName: "Grep", isError: false, content: [{ type: "text", text: "src/parse.ts:1\nsrc/cli.ts:4" }] } });
    expect(entries.get(u(18))).toMatchObject({ message: { role: "assistant", stopReason: "stop" } });
  });

  it("keeps injected text as injected-text custom messages, which probes never read as the user's words", async () => {
    await sessions.import({ path: MAIN });
    const entries = byId(SESSION);
    const injected = (id: string) => entries.get(id) as Extract<SessionEntry, { type: "custom_message" }>;
    expect(injected(u(15))).toMatchObject({ customType: INJECTED_TEXT_TYPE, details: { kind: "caveat" } });
    expect(injected(u(16))).toMatchObject({ customType: INJECTED_TEXT_TYPE, details: { kind: "command" } });
    expect(injected(`${u(17)}.1`)).toMatchObject({ customType: INJECTED_TEXT_TYPE, details: { kind: "system-reminder" } });
    expect(injected(u(29))).toMatchObject({ customType: INJECTED_TEXT_TYPE, details: { kind: "local-command" } });
    expect(entries.get(u(17))).toMatchObject({ message: { role: "user", content: [{ type: "text", text: "Also keep the old API working, please." }] } });
    expect(entries.get(`${u(17)}.2`)).toMatchObject({ message: { role: "user", content: [{ type: "image", mimeType: "image/png" }] } });

    const everything = store.path(SESSION).map((stored) => ({ entry: stored.entry, tokens: 0 }));
    const beforeCompaction = everything.slice(0, everything.findIndex((item) => item.entry.type === "compaction"));
    const probes = probeMessages(buildContext({ path: beforeCompaction }).messages);
    expect(probes.requests.map((request) => request.text)).toEqual([
      "Fix the parser bug in src/parse.ts. Never touch the tests.",
      "Also keep the old API working, please.",
    ]);
    // Both are the user's own standing rules; nothing of the injected reminder or command output is.
    expect(probes.constraints.map((constraint) => constraint.text)).toEqual(["Never touch the tests.", "Also keep the old API working, please."]);
    expect(probes.errors.map((error) => error.detail)).toEqual(["npm test"]);
    expect(probes.files).toEqual([{ text: "/home/dev/shop/src/parse.ts", index: expect.any(Number), detail: "modified" }]);
    const fileOps = createFileOps();
    for (const message of buildContext({ path: beforeCompaction }).messages) extractFileOpsFromMessage(message, fileOps);
    expect(computeFileLists(fileOps)).toEqual({ readFiles: [], modifiedFiles: ["/home/dev/shop/src/parse.ts"] });
  });

  it("makes Claude Code's compaction a marker and a compaction entry holding its summary, so the context is the one it continued from", async () => {
    await sessions.import({ path: MAIN });
    // The boundary line is the marker the compaction's kept part starts at; the summary line is the compaction.
    expect(byId(SESSION).get(u(25))).toMatchObject({ type: "custom", customType: "claude-code.compact_boundary", parentId: u(20) });
    const compaction = byId(SESSION).get(u(26));
    expect(compaction).toMatchObject({
      type: "compaction",
      parentId: u(25),
      firstKeptEntryId: u(25),
      tokensBefore: 48000,
      details: { source: "claude-code", trigger: "manual" },
      summary: expect.stringMatching(/^This session is being continued.*\n[\s\S]*never touch the tests/),
    });
    // What followed the summary line hangs under the compaction.
    expect(byId(SESSION).get(u(27))!.parentId).toBe(u(26));
    const path = pathOf(SESSION).map((entry) => ({ entry, tokens: 0 }));
    const context = buildContext({ path });
    expect(context.compactionId).toBe(u(26));
    expect(context.messages.map((message) => message.role)).toEqual(["compactionSummary", "custom", "custom", "custom", "user", "assistant", "toolResult", "assistant"]);
    // The range it replaced is measurable: the kept part is found on the path before it.
    expect(estimateContextTokens(path).measurable).toBe(true);
    // Checked at import against the context it replaced: its summary kept one of the user's two rules.
    const retention = (compaction as { details: { retention: RetentionReport } }).details.retention;
    expect(retention.constraints).toEqual({ kept: 1, total: 2 });
    expect(retention.missing.constraints).toEqual(["Also keep the old API working, please."]);
    expect(retention.files).toEqual({ kept: 1, total: 1 });
    expect(retention.errors.total).toBe(1);
  });

  it("hangs a compaction whose boundary names a line the file does not hold under the last main-chain entry before it", async () => {
    // Claude Code sometimes writes no line for what came right before a compaction (the turn's hook
    // messages): its boundary then names a uuid found nowhere in the file.
    const lines = readFileSync(MAIN, "utf8").replace(`"logicalParentUuid":"${u(21)}"`, `"logicalParentUuid":"${u(999)}"`);
    expect(lines).toContain(u(999));
    const result = await sessions.import({ content: lines });
    expect(byId(SESSION).get(u(25))).toMatchObject({ type: "custom", customType: "claude-code.compact_boundary", parentId: u(20) });
    // One path from the first message through the compaction: the history it replaced is not cut off.
    const path = pathOf(SESSION).map((entry) => entry.id);
    expect(path).toContain(u(4));
    expect(path).toContain(u(26));
    expect(result.skippedLines).toEqual([{ line: 33, reason: expect.stringMatching(/^invalid JSON/), bridgedTo: u(32) }]);
  });

  it("imports a subagent's file as its own session, under the main one", async () => {
    const result = await sessions.import({ path: SUBAGENT });
    expect(result.session).toMatchObject({ id: `agent-a7c1e9f.${SESSION}`, parentSession: SESSION });
    expect(result.entryCount).toBe(4);
    expect((await sessions.get({ sessionId: result.session.id })).leafId).toBe(u(104));
  });

  it("re-imports incrementally: the same id, stored entries recognised, only new lines appended", async () => {
    const lines = readFileSync(MAIN, "utf8").split("\n");
    // Cut right after the compact boundary: it waits for its summary line.
    const first = await sessions.import({ content: `${lines.slice(0, 25).join("\n")}\n` });
    expect(first.updated).toBe(false);
    expect(byId(SESSION).has(u(25))).toBe(false);
    expect(byId(SESSION).has(u(26))).toBe(false);
    const again = await sessions.import({ path: MAIN });
    expect(again.updated).toBe(true);
    expect(again.session.id).toBe(SESSION);
    const fresh = new SessionStore({ path: join(folder, "fresh.db"), ids: sequentialIds(), checkpoints: "sqlite" });
    const whole = await new SessionService(fresh, new FakeCounter(), { ids: sequentialIds() }).import({ path: MAIN });
    await fresh.close();
    expect(again.entryCount).toBe(whole.entryCount);
    expect(again.addedEntries).toBe(whole.entryCount - first.entryCount);
    expect(byId(SESSION).get(u(26))).toMatchObject({ type: "compaction", summary: expect.stringMatching(/^This session is being continued/) });
    expect((await sessions.get({ sessionId: SESSION })).leafId).toBe(u(35));
    // A re-import that adds nothing leaves a leaf the user moved where it is.
    await sessions.branch({ sessionId: SESSION, entryId: u(19) });
    const unchanged = await sessions.import({ path: MAIN });
    expect((await sessions.get({ sessionId: SESSION })).leafId).toBe(u(19));
    expect(unchanged).toMatchObject({ updated: true, addedEntries: 0, entryCount: whole.entryCount, skippedLines: [{ line: 33 }] });
    // Its export, a pi file, imported back is recognised entry by entry: nothing is added.
    const pi = await sessions.export({ sessionId: SESSION, format: "pi-jsonl" });
    expect(await sessions.import({ content: pi.content! })).toMatchObject({ format: "pi-jsonl", updated: true, addedEntries: 0 });
  });
});
