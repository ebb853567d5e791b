/**
 * session/import and session/export of pi JSONL (docs/design.md#pi-session-files): v1, v2 and v3 files
 * written the way pi writes them (test/fixtures/pi-v*.jsonl), the context pi would build from
 * them, malformed lines, and round trips that give the same bytes back.
 */
import {
  ContextBuild,
  EntryGet,
  SessionDelete,
  SessionExport,
  SessionGet,
  SessionImport,
  SessionList,
  SessionPath,
  SessionTree,
  type ParamsOf,
  type SessionEntry,
  type TreeNode,
} from "@base-context/protocol";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useDaemon } from "./support/daemon.js";
import { appendAll, assistant, createSession, fixture, rpcError, user } from "./fixtures/e2e.js";
import { piBuildContext, piLoad } from "./fixtures/pi-reference.js";

const d = useDaemon();
/** Where the tests write files to import and export to. */
let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "bc-e2e-import-"));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});
/**
 * The sessions the running test imported, deleted after it whether it passed or not: the fixtures
 * keep their ids, so one left behind would make the next import of the same file fail with session_exists.
 */
const imported = new Set<string>();
afterEach(async () => {
  for (const sessionId of imported) await d.client.request(SessionDelete, { sessionId }).catch(() => undefined);
  imported.clear();
});

const read = (name: string) => readFileSync(fixture(name), "utf8");
const lines = (content: string) => content.split("\n").filter((line) => line.length > 0);
const parse = (content: string) => lines(content).map((line) => JSON.parse(line) as Record<string, unknown>);

/** session/import, remembering the session for the afterEach that deletes it. */
async function importSession(params: ParamsOf<typeof SessionImport>) {
  const result = await d.client.request(SessionImport, params);
  imported.add(result.session.id);
  return result;
}
async function importPath(name: string) {
  return importSession({ format: "pi-jsonl", path: fixture(name) });
}
async function exportContent(sessionId: string): Promise<string> {
  const { content } = await d.client.request(SessionExport, { sessionId, format: "pi-jsonl" });
  expect(typeof content).toBe("string");
  return content!;
}
/** The session's context as pi would build it from the daemon's own export of the session. */
async function piContextOf(sessionId: string, leafId?: string) {
  const { entries } = piLoad(await exportContent(sessionId));
  return piBuildContext(entries, leafId);
}
async function expectContextAsPi(sessionId: string, leafId?: string) {
  const pi = await piContextOf(sessionId, leafId);
  const ours = await d.client.request(ContextBuild, leafId === undefined ? { sessionId } : { sessionId, leafId });
  expect(ours.messages).toEqual(pi.messages);
  expect(ours.thinkingLevel).toBe(pi.thinkingLevel);
  expect(ours.model ?? null).toEqual(pi.model);
  return ours;
}

describe("pi v3 files", () => {
  it("imports every entry as written, the header's fields, and the last line as leaf", async () => {
    const content = read("pi-v3.jsonl");
    const [header, ...entries] = parse(content);
    const result = await importPath("pi-v3.jsonl");
    expect(result.entryCount).toBe(entries.length);
    expect(result.skippedLines ?? []).toEqual([]);
    expect(result.session).toMatchObject({
      id: header!.id,
      cwd: header!.cwd,
      createdAt: header!.timestamp,
      parentSession: header!.parentSession,
      branchedFromEntry: header!.branchedFromEntry,
      name: "API rate limiting",
    });
    const sessionId = result.session.id;
    expect(await d.client.request(SessionGet, { sessionId })).toMatchObject({ leafId: entries.at(-1)!.id, entryCount: entries.length });
    for (const entry of entries) {
      expect((await d.client.request(EntryGet, { sessionId, entryId: entry.id as string })).entry).toEqual(entry);
    }
    const listed = (await d.client.request(SessionList, { cwd: header!.cwd as string })).sessions.find((s) => s.id === sessionId);
    expect(listed).toMatchObject({ name: "API rate limiting", entryCount: entries.length });
  });

  it("exports the imported file byte for byte", async () => {
    const { session } = await importPath("pi-v3.jsonl");
    expect(await exportContent(session.id)).toBe(read("pi-v3.jsonl"));
  });

  it("builds the context pi builds: the latest compaction summary, its kept messages (a branch summary first), then what follows", async () => {
    const { session } = await importPath("pi-v3.jsonl");
    const sessionId = session.id;
    const context = await expectContextAsPi(sessionId);
    expect(context.compactionId).toBe("5b6c7d8e");
    expect(context.messages.map((m) => m.role)).toEqual([
      "compactionSummary", // "## Goal\nRate-limit the public API with Redis and metrics."
      "branchSummary", // firstKeptEntryId
      "user",
      "assistant", // aborted, still in the native context
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(context.messages[0]).toMatchObject({
      summary: "## Goal\nRate-limit the public API with Redis and metrics.",
      tokensBefore: 45000,
    });
    expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-sonnet-4-5" });
    expect(context.thinkingLevel).toBe("medium");

    // The abandoned branch, under the first compaction: bash runs, custom messages, the hidden `!!` run left out.
    const abandoned = await expectContextAsPi(sessionId, "9b0c1d2e");
    expect(abandoned.compactionId).toBe("5d6e7f8a");
    expect(abandoned.messages.map((m) => m.role)).toEqual([
      "compactionSummary",
      "assistant",
      "toolResult",
      "bashExecution",
      "custom", // custom_message entry
      "custom", // message with role custom
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(JSON.stringify(abandoned.messages)).not.toContain("SECRET=1");
  });

  it("rebuilds the tree with its branch and the labels as pi resolves them (set, then cleared)", async () => {
    const { session } = await importPath("pi-v3.jsonl");
    const tree = await d.client.request(SessionTree, { sessionId: session.id });
    const byId = new Map<string, TreeNode>();
    const stack = [...tree.roots];
    while (stack.length > 0) {
      const n = stack.pop()!;
      byId.set(n.entry.id, n);
      stack.push(...n.children);
    }
    expect(tree.roots.map((r) => r.entry.id)).toEqual(["0a1b2c3d"]);
    expect(byId.get("7f8a9b0c")!.children.map((c) => c.entry.id)).toEqual(["8a9b0c1d", "0c1d2e3f"]);
    // "first-read" was set on 4e5f6a7b and cleared by the later label entry.
    expect(byId.get("4e5f6a7b")!.label).toBeUndefined();
    expect(byId.get("8e9f0a1b")!.isLeaf).toBe(true);
  });
});

describe("pi v2 files", () => {
  it("migrates the hookMessage role to custom and otherwise keeps every line", async () => {
    const entries = parse(read("pi-v2.jsonl")).slice(1);
    const { session, entryCount } = await importPath("pi-v2.jsonl");
    expect(entryCount).toBe(entries.length);
    const hook = (await d.client.request(EntryGet, { sessionId: session.id, entryId: "e5f6a7b8" })).entry;
    expect(hook).toMatchObject({ type: "message", message: { role: "custom", customType: "git-status", display: true } });
    const exported = parse(await exportContent(session.id));
    expect(exported[0]).toMatchObject({ type: "session", version: 3, id: session.id });
    const expected = entries.map((e) => (e.id === "e5f6a7b8" ? { ...e, message: { ...(e.message as object), role: "custom" } } : e));
    expect(exported.slice(1)).toEqual(expected);
  });

  it("builds the context pi builds for the last entry, after a compaction and a branch summary", async () => {
    const { session } = await importPath("pi-v2.jsonl");
    const context = await expectContextAsPi(session.id);
    expect(context.compactionId).toBe("c9d0e1f2");
    expect(context.messages.map((m) => m.role)).toEqual([
      "compactionSummary",
      "user", // firstKeptEntryId d4e5f6a7
      "custom", // was hookMessage
      "assistant",
      "toolResult",
      "assistant",
      "branchSummary",
      "user",
      "assistant",
    ]);
    expect(context.model).toEqual({ provider: "openai", modelId: "gpt-5" });
    expect(context.thinkingLevel).toBe("medium");
    // The abandoned branch too.
    await expectContextAsPi(session.id, "e1f2a3b4");
  });
});

describe("pi v1 files", () => {
  it("gives every line an id chained to the previous one and turns firstKeptEntryIndex into firstKeptEntryId", async () => {
    const fileEntries = parse(read("pi-v1.jsonl")).slice(1);
    const { session, entryCount } = await importPath("pi-v1.jsonl");
    expect(entryCount).toBe(fileEntries.length);
    expect(session).toMatchObject({
      id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
      cwd: "/home/dev/todo-app",
      provider: "anthropic",
      modelId: "claude-sonnet-4-5",
    });
    const { entries } = await d.client.request(SessionPath, { sessionId: session.id });
    // One chain in file order, so the path from the last line is the whole file.
    expect(entries).toHaveLength(fileEntries.length);
    entries.forEach((entry: SessionEntry, i: number) => {
      expect(entry.parentId).toBe(i === 0 ? null : entries[i - 1]!.id);
      expect(entry.id).toMatch(/^[0-9a-f]{8}$/);
      const { type, timestamp } = fileEntries[i]!;
      expect({ type: entry.type, timestamp: entry.timestamp }).toEqual({ type, timestamp });
    });
    expect(new Set(entries.map((e: SessionEntry) => e.id)).size).toBe(entries.length);
    // Line indexes count the header as 0: index 6 is the 6th entry, index 14 the 14th.
    const compactions = entries.filter((e: SessionEntry) => e.type === "compaction");
    expect(compactions.map((c) => (c.type === "compaction" ? c.firstKeptEntryId : undefined))).toEqual([entries[5]!.id, entries[13]!.id]);
    expect(entries[5]).toMatchObject({ message: { role: "user", content: "Now sort the list by due date, earliest first." } });
    expect(entries[13]).toMatchObject({ message: { role: "user", content: "Add tests for the sorting." } });
    for (const c of compactions) expect(c).not.toHaveProperty("firstKeptEntryIndex");
  });

  it("builds the context pi builds, for the last entry and for a leaf under the first compaction", async () => {
    const { session } = await importPath("pi-v1.jsonl");
    const context = await expectContextAsPi(session.id);
    expect(context.messages[0]).toMatchObject({
      role: "compactionSummary",
      summary: "Todos have a dueDate, the list sorts by it and overdue items are red.",
      tokensBefore: 9100,
    });
    expect(context.messages.slice(1).map((m) => ("content" in m && typeof m.content === "string" ? m.content : m.role))).toEqual([
      "Add tests for the sorting.",
      "assistant",
      "toolResult",
      "Thanks, that's all.",
      "assistant",
    ]);
    expect(context.model).toEqual({ provider: "openai", modelId: "gpt-4.1" });
    expect(context.thinkingLevel).toBe("high");

    const { entries } = await d.client.request(SessionPath, { sessionId: session.id });
    const underFirst = await expectContextAsPi(session.id, entries[10]!.id); // "Also show overdue items in red."
    expect(underFirst.messages.map((m) => m.role)).toEqual(["compactionSummary", "user", "assistant", "toolResult", "assistant", "user"]);
  });
});

describe("edge cases pi handles in its own way", () => {
  const J = JSON.stringify;
  const msg = (id: string | undefined, parentId: string | null | undefined, second: number, message: object) => ({
    type: "message",
    ...(id !== undefined ? { id, parentId } : {}),
    timestamp: `2026-03-01T00:00:0${second}.000Z`,
    message: { ...message, timestamp: Date.parse(`2026-03-01T00:00:0${second}.000Z`) },
  });

  it("v1: firstKeptEntryIndex counts the lines pi could parse, so a malformed line before it does not shift it", async () => {
    const content = [
      J({ type: "session", id: "v1-with-bad-line", timestamp: "2026-03-01T00:00:00.000Z", cwd: "/p" }),
      J(msg(undefined, undefined, 1, { role: "user", content: "u1" })),
      "{oops",
      J(
        msg(undefined, undefined, 2, {
          role: "assistant",
          content: [{ type: "text", text: "a2" }],
          provider: "p",
          model: "m",
          stopReason: "stop",
        }),
      ),
      J(msg(undefined, undefined, 3, { role: "user", content: "u3" })),
      J({ type: "compaction", timestamp: "2026-03-01T00:00:04.000Z", summary: "S", firstKeptEntryIndex: 3, tokensBefore: 5 }),
    ].join("\n");
    const { session, skippedLines } = await importSession({ format: "pi-jsonl", content });
    expect(skippedLines?.map((s) => s.line)).toEqual([3]);
    const context = await expectContextAsPi(session.id);
    expect(context.messages).toEqual([
      expect.objectContaining({ role: "compactionSummary", summary: "S" }),
      expect.objectContaining({ content: "u3" }),
    ]);
    // pi's own reading of the original file agrees.
    expect(piBuildContext(piLoad(content).entries).messages).toEqual(context.messages);
  });

  it("a compaction whose firstKeptEntryId is not on its path keeps nothing before it", async () => {
    const content = [
      J({ type: "session", version: 3, id: "dangling-first-kept", timestamp: "2026-03-01T00:00:00.000Z", cwd: "/p" }),
      J(msg("a", null, 1, { role: "user", content: "u1" })),
      J(msg("b", "a", 2, { role: "user", content: "u2" })),
      J({
        type: "compaction",
        id: "c",
        parentId: "b",
        timestamp: "2026-03-01T00:00:03.000Z",
        summary: "S",
        firstKeptEntryId: "not-there",
        tokensBefore: 5,
      }),
      J(msg("d", "c", 4, { role: "user", content: "u3" })),
    ].join("\n");
    const { session } = await importSession({ format: "pi-jsonl", content });
    const context = await expectContextAsPi(session.id);
    expect(context.messages.map((m) => m.role)).toEqual(["compactionSummary", "user"]);
    expect(piBuildContext(piLoad(content).entries).messages).toEqual(context.messages);
  });
});

describe("malformed files", () => {
  it("skips malformed lines and reports each with its line number and a reason", async () => {
    const { session, entryCount, skippedLines } = await importPath("pi-malformed.jsonl");
    expect(entryCount).toBe(3);
    expect(skippedLines?.map((s) => s.line)).toEqual([3, 5, 6, 7, 9]);
    const reasons = new Map(skippedLines!.map((s) => [s.line, s.reason]));
    expect(reasons.get(3)).toMatch(/JSON/i);
    expect(reasons.get(6)).toMatch(/mystery/);
    expect(reasons.get(9)).toMatch(/header/);
    for (const reason of reasons.values()) expect(reason.length).toBeGreaterThan(0);
    const { entries } = await d.client.request(SessionPath, { sessionId: session.id });
    expect(entries.map((e: SessionEntry) => e.id)).toEqual(["aa000001", "aa000005", "aa000006"]);
    // The export holds only what was read.
    expect(parse(await exportContent(session.id)).slice(1).map((e) => e.id)).toEqual(["aa000001", "aa000005", "aa000006"]);
  });

  it("fails with import_failed when the first line is not a session header, and creates nothing", async () => {
    const before = (await d.client.request(SessionList, {})).sessions.length;
    const error = await rpcError(
      d.client.request(SessionImport, { format: "pi-jsonl", content: `${JSON.stringify({ type: "message", id: "x", parentId: null })}\n` }),
    );
    expect(error.data?.code).toBe("import_failed");
    expect((await rpcError(d.client.request(SessionImport, { format: "pi-jsonl", content: "" }))).data?.code).toBe("import_failed");
    expect((await d.client.request(SessionList, {})).sessions.length).toBe(before);
  });

  it("fails with import_failed for a path that cannot be read", async () => {
    const error = await rpcError(d.client.request(SessionImport, { format: "pi-jsonl", path: join(scratch, "missing.jsonl") }));
    expect(error.data?.code).toBe("import_failed");
  });

  it("imports a session whose id is already here by recognising its entries: nothing is added twice", async () => {
    const { session } = await importPath("pi-v2.jsonl");
    const again = await importPath("pi-v2.jsonl");
    expect(again).toMatchObject({ updated: true, addedEntries: 0, session: { id: session.id } });
    expect((await d.client.request(SessionGet, { sessionId: session.id })).entryCount).toBe(parse(read("pi-v2.jsonl")).length - 1);
  });
});

describe("import by content, export to a path", () => {
  it("imports the same session from content as from path, and overrides the cwd when asked", async () => {
    const fromContent = await importSession({ format: "pi-jsonl", content: read("pi-v3.jsonl"), cwd: "/moved/here" });
    expect(fromContent.session.cwd).toBe("/moved/here");
    const content = await exportContent(fromContent.session.id);
    expect(parse(content)[0]!.cwd).toBe("/moved/here");
    expect(lines(content).slice(1)).toEqual(lines(read("pi-v3.jsonl")).slice(1));
  });

  it("exports to a path (the same bytes as content) and leaves no temporary file behind", async () => {
    const { session } = await importPath("pi-v3.jsonl");
    const path = join(scratch, "exported-v3.jsonl");
    await expect(d.client.request(SessionExport, { sessionId: session.id, format: "pi-jsonl", path })).resolves.toEqual({ path });
    expect(readFileSync(path, "utf8")).toBe(await exportContent(session.id));
    expect(readdirSync(scratch).filter((f) => f.includes(".tmp"))).toEqual([]);
  });

  it("fails with export_failed when the path cannot be written", async () => {
    const sessionId = await createSession(d.client);
    const path = join(scratch, "no-such-dir", "out.jsonl");
    const error = await rpcError(d.client.request(SessionExport, { sessionId, format: "pi-jsonl", path }));
    expect(error.data?.code).toBe("export_failed");
    expect(existsSync(path)).toBe(false);
  });
});

describe("round trips", () => {
  for (const name of ["pi-v1.jsonl", "pi-v2.jsonl", "pi-v3.jsonl", "pi-malformed.jsonl"]) {
    it(`${name}: export → import → export gives identical bytes, and the same context`, async () => {
      const first = await importPath(name);
      const sessionId = first.session.id;
      const exported = await exportContent(sessionId);
      const context = await d.client.request(ContextBuild, { sessionId });
      const path = join(scratch, `round-${name}`);
      writeFileSync(path, exported);
      await d.client.request(SessionDelete, { sessionId });

      const second = await importSession({ format: "pi-jsonl", path });
      expect(second.session.id).toBe(sessionId);
      expect(second.skippedLines ?? []).toEqual([]);
      expect(second.entryCount).toBe(first.entryCount);
      expect(await exportContent(sessionId)).toBe(exported);
      expect(await d.client.request(ContextBuild, { sessionId })).toEqual(context);
    });
  }

  it("a session built through the protocol exports as a pi v3 file that imports back to the same entries", async () => {
    const sessionId = await createSession(d.client, "/home/me/native", "native");
    await appendAll(d.client, sessionId, [
      { type: "model_change", provider: "openai", modelId: "gpt-4.1" },
      user("hello"),
      assistant("hi", { toolCalls: [{ id: "c1", name: "read", arguments: { path: "x" } }] }),
    ]);
    const exported = await exportContent(sessionId);
    const [header, ...entries] = parse(exported);
    expect(header).toMatchObject({ type: "session", version: 3, id: sessionId, cwd: "/home/me/native" });
    for (const entry of entries) expect(Object.keys(entry).slice(0, 4)).toEqual(["type", "id", "parentId", "timestamp"]);
    const { entries: path } = await d.client.request(SessionPath, { sessionId });
    expect(entries).toEqual(path);
    await d.client.request(SessionDelete, { sessionId });
    await importSession({ format: "pi-jsonl", content: exported });
    expect(await exportContent(sessionId)).toBe(exported);
  });
});
