/**
 * Sessions and entries through the protocol: create/list/get/delete/fork, append (one, many,
 * idempotent retries), entry/get, moving the leaf, paths, and the application errors of each.
 */
import {
  ContextBuild,
  ContextUsage,
  EntryAppend,
  EntryAppendMany,
  EntryGet,
  ErrorCodes,
  LabelSet,
  SessionBranch,
  SessionCreate,
  SessionDelete,
  SessionExport,
  SessionFork,
  SessionGet,
  SessionList,
  SessionPath,
  SessionRename,
  SessionSearch,
  SessionTree,
  type SessionEntry,
} from "@base-context/protocol";
import { describe, expect, it } from "vitest";
import { useDaemon } from "./support/daemon.js";
import { appendAll, assistant, createSession, rpcError, toolResult, user } from "./fixtures/e2e.js";

const d = useDaemon();

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** Waits until the wall clock has moved on by at least one millisecond. */
const clockTick = async () => {
  const start = Date.now();
  while (Date.now() <= start + 1) await new Promise((resolve) => setTimeout(resolve, 1));
};
const ids = (entries: SessionEntry[]) => entries.map((e) => e.id);

describe("session/create, get, list, delete", () => {
  it("creates a session with a fresh id, the cwd, a name and an ISO createdAt, empty and without a leaf", async () => {
    const { session } = await d.client.request(SessionCreate, { cwd: "/home/me/create", name: "Refactor auth" });
    expect(session).toMatchObject({ cwd: "/home/me/create", name: "Refactor auth" });
    expect(session.id).toMatch(/\S{8,}/);
    expect(session.createdAt).toMatch(ISO);
    const got = await d.client.request(SessionGet, { sessionId: session.id });
    expect(got).toEqual({ session, leafId: null, entryCount: 0 });
  });

  it("creates a session with a client-chosen id and parentSession, and refuses that id again with session_exists", async () => {
    const { session } = await d.client.request(SessionCreate, {
      cwd: "/home/me/create",
      id: "chosen-id-1",
      parentSession: "older-session",
    });
    expect(session).toMatchObject({ id: "chosen-id-1", parentSession: "older-session" });
    const again = await rpcError(d.client.request(SessionCreate, { cwd: "/elsewhere", id: "chosen-id-1" }));
    expect(again.code).toBe(ErrorCodes.SessionExists);
    expect(again.data?.code).toBe("session_exists");
  });

  it("lists sessions of a cwd, most recently modified first, with entry counts, name and first message", async () => {
    const cwd = `/home/me/list-${Date.now()}`;
    const a = await createSession(d.client, cwd, "first");
    const b = await createSession(d.client, cwd);
    await createSession(d.client, "/home/me/other-project");
    await clockTick(); // modifiedAt has millisecond resolution: make the append strictly later than b's creation
    await appendAll(d.client, a, [user("How do I rotate refresh tokens?"), assistant("Like this.")]);

    const { sessions, nextCursor } = await d.client.request(SessionList, { cwd });
    expect(nextCursor).toBeUndefined();
    expect(sessions.map((s) => s.id)).toEqual([a, b]);
    expect(sessions[0]).toMatchObject({ id: a, cwd, name: "first", entryCount: 2, firstMessage: "How do I rotate refresh tokens?" });
    expect(sessions[0]!.modifiedAt >= sessions[1]!.modifiedAt).toBe(true);
    expect(sessions[1]).toMatchObject({ id: b, entryCount: 0 });
    expect(sessions[1]!.firstMessage).toBeUndefined();
  });

  it("pages through session/list with limit and cursor, every session exactly once", async () => {
    const cwd = `/home/me/paging-${Date.now()}`;
    const created = new Set<string>();
    for (let i = 0; i < 7; i++) created.add(await createSession(d.client, cwd));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await d.client.request(SessionList, cursor === undefined ? { cwd, limit: 3 } : { cwd, limit: 3, cursor });
      expect(page.sessions.length).toBeLessThanOrEqual(3);
      seen.push(...page.sessions.map((s) => s.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(created);
  });

  it("deletes a session: it is gone from get and list, and a second delete is session_not_found", async () => {
    const cwd = `/home/me/delete-${Date.now()}`;
    const sessionId = await createSession(d.client, cwd);
    await appendAll(d.client, sessionId, [user("doomed")]);
    await expect(d.client.request(SessionDelete, { sessionId })).resolves.toEqual({});
    expect((await rpcError(d.client.request(SessionGet, { sessionId }))).data?.code).toBe("session_not_found");
    expect((await d.client.request(SessionList, { cwd })).sessions).toEqual([]);
    const again = await rpcError(d.client.request(SessionDelete, { sessionId }));
    expect(again.code).toBe(ErrorCodes.SessionNotFound);
    expect(again.data?.code).toBe("session_not_found");
  });
});

describe("session/search and session/rename", () => {
  it("searches every message as it is appended, best match first; a rename is a session_info entry and matches first", async () => {
    const cwd = `/search-${Date.now()}`;
    const themes = await createSession(d.client, cwd);
    await appendAll(d.client, themes, [
      user("/mode"),
      assistant("ok"),
      user("Which colour themes do we ship?"),
      assistant("Two themes: dark and light themes."),
    ]);
    const other = await createSession(d.client, cwd);
    await appendAll(d.client, other, [
      user("Fix the build. By the way, the theme switcher flickers on startup in some browsers sometimes."),
    ]);

    const { results } = await d.client.request(SessionSearch, { query: "theme", cwd });
    expect(results.map((result) => result.session.id)).toEqual([themes, other]);
    expect(results[0]!.hitCount).toBe(2);
    expect(results[0]!.hits[0]).toMatchObject({ type: "message", role: "assistant", snippet: "Two themes: dark and light themes." });

    const renamed = await d.client.request(SessionRename, { sessionId: other, name: "Build fixes" });
    expect(renamed.entry).toMatchObject({ type: "session_info", name: "Build fixes" });
    expect(renamed.session.name).toBe("Build fixes");
    const byName = await d.client.request(SessionSearch, { query: "build", cwd });
    expect(byName.results[0]).toMatchObject({ session: { id: other, name: "Build fixes" }, nameMatches: true });
    expect((await d.client.request(SessionGet, { sessionId: other })).session.name).toBe("Build fixes");

    const missing = await rpcError(d.client.request(SessionRename, { sessionId: "nope", name: "x" }));
    expect(missing.data).toMatchObject({ code: "session_not_found" });
  });
});

describe("entry/append", () => {
  it("assigns id, parentId (the leaf) and timestamp, moves the leaf and returns the entry's token count", async () => {
    const sessionId = await createSession(d.client);
    const first = await d.client.request(EntryAppend, { sessionId, entry: user("hello there") });
    expect(first.entry).toMatchObject({ type: "message", parentId: null, message: { role: "user", content: "hello there" } });
    expect(first.entry.id).toMatch(/^[0-9a-f]{8}$/);
    expect(first.entry.timestamp).toMatch(ISO);
    expect(first.leafId).toBe(first.entry.id);
    expect(Number.isInteger(first.tokens) && first.tokens > 0).toBe(true);

    const second = await d.client.request(EntryAppend, { sessionId, entry: assistant("General Kenobi") });
    expect(second.entry.parentId).toBe(first.entry.id);
    expect(second.leafId).toBe(second.entry.id);
    expect(await d.client.request(SessionGet, { sessionId })).toMatchObject({ leafId: second.entry.id, entryCount: 2 });
  });

  it("keeps an id and timestamp the client gives, and refuses a duplicate id with entry_exists", async () => {
    const sessionId = await createSession(d.client);
    const { entry } = await d.client.request(EntryAppend, {
      sessionId,
      entry: { ...user("mine"), id: "client-1", timestamp: "2025-05-05T05:05:05.000Z" },
    });
    expect(entry).toMatchObject({ id: "client-1", timestamp: "2025-05-05T05:05:05.000Z", parentId: null });
    const dup = await rpcError(d.client.request(EntryAppend, { sessionId, entry: { ...user("again"), id: "client-1" } }));
    expect(dup.code).toBe(ErrorCodes.EntryExists);
    expect(dup.data?.code).toBe("entry_exists");
    expect((await d.client.request(SessionGet, { sessionId })).entryCount).toBe(1);
  });

  it("attaches to an explicit parentId (a branch) or, with parentId null, starts a new root", async () => {
    const sessionId = await createSession(d.client);
    const [u1, a1] = await appendAll(d.client, sessionId, [user("q1"), assistant("a1")]);
    const branched = await d.client.request(EntryAppend, { sessionId, entry: user("q1 again, differently"), parentId: u1!.id });
    expect(branched.entry.parentId).toBe(u1!.id);
    expect(branched.leafId).toBe(branched.entry.id);
    const path = await d.client.request(SessionPath, { sessionId });
    expect(ids(path.entries)).toEqual([u1!.id, branched.entry.id]);
    expect(ids(path.entries)).not.toContain(a1!.id);

    const root = await d.client.request(EntryAppend, { sessionId, entry: user("fresh start"), parentId: null });
    expect(root.entry.parentId).toBeNull();
    expect(ids((await d.client.request(SessionPath, { sessionId })).entries)).toEqual([root.entry.id]);
  });

  it("refuses a parentId that is not an entry of the session with invalid_entry and writes nothing", async () => {
    const sessionId = await createSession(d.client);
    await appendAll(d.client, sessionId, [user("only")]);
    const error = await rpcError(d.client.request(EntryAppend, { sessionId, entry: user("orphan"), parentId: "deadbeef" }));
    expect(error.code).toBe(ErrorCodes.InvalidEntry);
    expect(error.data).toMatchObject({ code: "invalid_entry", parentId: "deadbeef" });
    expect((await d.client.request(SessionGet, { sessionId })).entryCount).toBe(1);
  });

  it("refuses a label whose target does not exist and a compaction whose firstKeptEntryId is not on its path", async () => {
    const sessionId = await createSession(d.client);
    const [u1] = await appendAll(d.client, sessionId, [user("a")]);
    const label = await rpcError(d.client.request(EntryAppend, { sessionId, entry: { type: "label", targetId: "nope", label: "x" } }));
    expect(label.data?.code).toBe("invalid_entry");
    const compaction = await rpcError(
      d.client.request(EntryAppend, { sessionId, entry: { type: "compaction", summary: "s", firstKeptEntryId: "nope", tokensBefore: 10 } }),
    );
    expect(compaction.data?.code).toBe("invalid_entry");
    expect(await d.client.request(SessionGet, { sessionId })).toMatchObject({ entryCount: 1, leafId: u1!.id });
  });

  it("with a requestId, a retry returns the first result and writes nothing, even with different params", async () => {
    const sessionId = await createSession(d.client);
    await appendAll(d.client, sessionId, [user("before")]);
    const first = await d.client.request(EntryAppend, { sessionId, entry: assistant("the answer"), requestId: "req-1" });
    const retry = await d.client.request(EntryAppend, { sessionId, entry: assistant("the answer"), requestId: "req-1" });
    expect(retry).toEqual(first);
    const different = await d.client.request(EntryAppend, { sessionId, entry: user("something else"), requestId: "req-1" });
    expect(different).toEqual(first);
    expect(await d.client.request(SessionGet, { sessionId })).toMatchObject({ entryCount: 2, leafId: first.entry.id });

    // The retry is answered as it was even after the leaf moved on.
    const later = await d.client.request(EntryAppend, { sessionId, entry: user("later") });
    expect(await d.client.request(EntryAppend, { sessionId, entry: assistant("x"), requestId: "req-1" })).toEqual(first);
    expect(await d.client.request(SessionGet, { sessionId })).toMatchObject({ entryCount: 3, leafId: later.entry.id });
  });

  it("scopes requestIds to a session: the same requestId appends in another session", async () => {
    const a = await createSession(d.client);
    const b = await createSession(d.client);
    const inA = await d.client.request(EntryAppend, { sessionId: a, entry: user("a"), requestId: "shared" });
    const inB = await d.client.request(EntryAppend, { sessionId: b, entry: user("b"), requestId: "shared" });
    expect(inB.entry.id).not.toBe(inA.entry.id);
    expect((await d.client.request(SessionGet, { sessionId: b })).entryCount).toBe(1);
  });
});

describe("entry/appendMany", () => {
  it("appends all entries as one chain under the leaf and returns them with the new leaf", async () => {
    const sessionId = await createSession(d.client);
    const [u0] = await appendAll(d.client, sessionId, [user("start")]);
    const call = { id: "call_1", name: "read", arguments: { path: "a.ts" } };
    const { entries, leafId } = await d.client.request(EntryAppendMany, {
      sessionId,
      entries: [assistant("", { toolCalls: [call] }), toolResult("call_1", "read", "contents"), assistant("done")],
    });
    expect(entries).toHaveLength(3);
    expect(entries.map((e) => e.parentId)).toEqual([u0!.id, entries[0]!.id, entries[1]!.id]);
    expect(leafId).toBe(entries[2]!.id);
    expect(ids((await d.client.request(SessionPath, { sessionId })).entries)).toEqual([u0!.id, ...ids(entries)]);
  });

  it("writes nothing when one entry of the batch is refused (one transaction)", async () => {
    const sessionId = await createSession(d.client);
    const [u0] = await appendAll(d.client, sessionId, [user("start")]);
    const error = await rpcError(
      d.client.request(EntryAppendMany, { sessionId, entries: [assistant("ok"), { type: "label", targetId: "missing", label: "x" }] }),
    );
    expect(error.data?.code).toBe("invalid_entry");
    expect(await d.client.request(SessionGet, { sessionId })).toMatchObject({ entryCount: 1, leafId: u0!.id });
  });

  it("with a requestId, a retry returns the first result and writes nothing", async () => {
    const sessionId = await createSession(d.client);
    const first = await d.client.request(EntryAppendMany, { sessionId, entries: [user("q"), assistant("a")], requestId: "batch-1" });
    const retry = await d.client.request(EntryAppendMany, { sessionId, entries: [user("q"), assistant("a")], requestId: "batch-1" });
    expect(retry).toEqual(first);
    expect((await d.client.request(SessionGet, { sessionId })).entryCount).toBe(2);
  });

  it("refuses a requestId already used by entry/append with request_id_conflict", async () => {
    const sessionId = await createSession(d.client);
    await d.client.request(EntryAppend, { sessionId, entry: user("q"), requestId: "one-id" });
    const error = await rpcError(d.client.request(EntryAppendMany, { sessionId, entries: [user("q")], requestId: "one-id" }));
    expect(error.code).toBe(ErrorCodes.RequestIdConflict);
    expect(error.data?.code).toBe("request_id_conflict");
    expect((await d.client.request(SessionGet, { sessionId })).entryCount).toBe(1);
  });

  it("refuses an empty batch with -32602", async () => {
    const sessionId = await createSession(d.client);
    expect((await rpcError(d.client.request(EntryAppendMany, { sessionId, entries: [] }))).code).toBe(-32602);
  });
});

describe("entry/get", () => {
  it("returns the stored entry with the same token count the append reported", async () => {
    const sessionId = await createSession(d.client);
    const appended = await d.client.request(EntryAppend, { sessionId, entry: user("count me, please, all of these words") });
    const got = await d.client.request(EntryGet, { sessionId, entryId: appended.entry.id });
    expect(got.entry).toEqual(appended.entry);
    expect(got.tokens).toBe(appended.tokens);
  });

  it("answers an unknown entry with entry_not_found and an unknown session with session_not_found", async () => {
    const sessionId = await createSession(d.client);
    const noEntry = await rpcError(d.client.request(EntryGet, { sessionId, entryId: "00000000" }));
    expect(noEntry.code).toBe(ErrorCodes.EntryNotFound);
    expect(noEntry.data).toMatchObject({ code: "entry_not_found", entryId: "00000000" });
    const noSession = await rpcError(d.client.request(EntryGet, { sessionId: "no-such-session", entryId: "00000000" }));
    expect(noSession.code).toBe(ErrorCodes.SessionNotFound);
    expect(noSession.data).toMatchObject({ code: "session_not_found", sessionId: "no-such-session" });
  });
});

describe("session/branch and session/path", () => {
  it("moves the leaf without appending, so the next append starts a branch there", async () => {
    const sessionId = await createSession(d.client);
    const [u1, a1, u2] = await appendAll(d.client, sessionId, [user("q1"), assistant("a1"), user("q2")]);
    await expect(d.client.request(SessionBranch, { sessionId, entryId: a1!.id })).resolves.toEqual({ leafId: a1!.id });
    expect(await d.client.request(SessionGet, { sessionId })).toMatchObject({ leafId: a1!.id, entryCount: 3 });
    const b = await d.client.request(EntryAppend, { sessionId, entry: user("q2, another way") });
    expect(b.entry.parentId).toBe(a1!.id);
    expect(ids((await d.client.request(SessionPath, { sessionId })).entries)).toEqual([u1!.id, a1!.id, b.entry.id]);
    // The abandoned branch is still there and reachable by leafId.
    expect(ids((await d.client.request(SessionPath, { sessionId, leafId: u2!.id })).entries)).toEqual([u1!.id, a1!.id, u2!.id]);
  });

  it("branches to null (before the first entry): the path is empty and the next append is a new root", async () => {
    const sessionId = await createSession(d.client);
    await appendAll(d.client, sessionId, [user("q1")]);
    await expect(d.client.request(SessionBranch, { sessionId, entryId: null })).resolves.toEqual({ leafId: null });
    expect((await d.client.request(SessionPath, { sessionId })).entries).toEqual([]);
    const root = await d.client.request(EntryAppend, { sessionId, entry: user("again") });
    expect(root.entry.parentId).toBeNull();
  });

  it("returns the path root → leaf for the current leaf, a given leafId, and nothing for leafId null", async () => {
    const sessionId = await createSession(d.client);
    const entries = await appendAll(d.client, sessionId, [user("1"), assistant("2"), user("3"), assistant("4")]);
    expect((await d.client.request(SessionPath, { sessionId })).entries).toEqual(entries);
    expect((await d.client.request(SessionPath, { sessionId, leafId: entries[1]!.id })).entries).toEqual(entries.slice(0, 2));
    expect((await d.client.request(SessionPath, { sessionId, leafId: null })).entries).toEqual([]);
  });

  it("answers an unknown entry with entry_not_found and leaves the leaf where it was", async () => {
    const sessionId = await createSession(d.client);
    const [u1] = await appendAll(d.client, sessionId, [user("1")]);
    const branch = await rpcError(d.client.request(SessionBranch, { sessionId, entryId: "ffffffff" }));
    expect(branch.code).toBe(ErrorCodes.EntryNotFound);
    expect(branch.data?.code).toBe("entry_not_found");
    expect((await d.client.request(SessionGet, { sessionId })).leafId).toBe(u1!.id);
    const path = await rpcError(d.client.request(SessionPath, { sessionId, leafId: "ffffffff" }));
    expect(path.data?.code).toBe("entry_not_found");
  });
});

describe("session/fork", () => {
  it("creates a new session holding the path root → entry with the same ids, leaving the source as it was", async () => {
    const sessionId = await createSession(d.client, "/home/me/fork", "source");
    const [u1, a1, u2, a2] = await appendAll(d.client, sessionId, [user("1"), assistant("2"), user("3"), assistant("4")]);
    await d.client.request(SessionBranch, { sessionId, entryId: a1!.id });
    const [other] = await appendAll(d.client, sessionId, [user("3b")]);

    const { session } = await d.client.request(SessionFork, { sessionId, entryId: u2!.id });
    expect(session.id).not.toBe(sessionId);
    expect(session).toMatchObject({ cwd: "/home/me/fork", parentSession: sessionId });
    const forked = await d.client.request(SessionGet, { sessionId: session.id });
    expect(forked).toMatchObject({ leafId: u2!.id, entryCount: 3 });
    const path = await d.client.request(SessionPath, { sessionId: session.id });
    expect(path.entries).toEqual([u1, a1, u2]);
    // Only the path: neither the later entry nor the other branch came along.
    const tree = await d.client.request(SessionTree, { sessionId: session.id, flat: true });
    expect(tree.nodes?.map((n) => n.entry.id)).toEqual([u1!.id, a1!.id, u2!.id]);

    const source = await d.client.request(SessionGet, { sessionId });
    expect(source).toMatchObject({ leafId: other!.id, entryCount: 5 });
    await expect(d.client.request(EntryGet, { sessionId, entryId: a2!.id })).resolves.toBeDefined();

    // The fork is a session of its own: appends there do not touch the source.
    await appendAll(d.client, session.id, [assistant("forked answer")]);
    expect((await d.client.request(SessionGet, { sessionId })).entryCount).toBe(5);
  });

  it("carries the labels of the copied entries, set by a label entry after the fork point as pi does", async () => {
    const sessionId = await createSession(d.client);
    const [u1, a1] = await appendAll(d.client, sessionId, [user("1"), assistant("2")]);
    await d.client.request(LabelSet, { sessionId, targetId: u1!.id, label: "start" });
    const { session } = await d.client.request(SessionFork, { sessionId, entryId: a1!.id });
    const tree = await d.client.request(SessionTree, { sessionId: session.id, flat: true });
    expect(tree.nodes?.find((n) => n.entry.id === u1!.id)?.label).toBe("start");
    expect(tree.nodes?.map((n) => n.entry.type)).toEqual(["message", "message", "label"]);
    expect(tree.nodes?.[2]?.entry).toMatchObject({ parentId: a1!.id, targetId: u1!.id, label: "start" });
  });

  it("answers an unknown entry with entry_not_found and an unknown session with session_not_found", async () => {
    const sessionId = await createSession(d.client);
    expect((await rpcError(d.client.request(SessionFork, { sessionId, entryId: "12345678" }))).data?.code).toBe("entry_not_found");
    expect((await rpcError(d.client.request(SessionFork, { sessionId: "missing", entryId: "12345678" }))).data?.code).toBe(
      "session_not_found",
    );
  });
});

describe("an unknown session", () => {
  it("is session_not_found (-31999) for every method that names one", async () => {
    const sessionId = "does-not-exist";
    const calls: [string, Promise<unknown>][] = [
      ["session/get", d.client.request(SessionGet, { sessionId })],
      ["session/delete", d.client.request(SessionDelete, { sessionId })],
      ["session/fork", d.client.request(SessionFork, { sessionId, entryId: "e" })],
      ["session/export", d.client.request(SessionExport, { sessionId, format: "pi-jsonl" })],
      ["entry/append", d.client.request(EntryAppend, { sessionId, entry: user("x") })],
      ["entry/appendMany", d.client.request(EntryAppendMany, { sessionId, entries: [user("x")] })],
      ["entry/get", d.client.request(EntryGet, { sessionId, entryId: "e" })],
      ["session/branch", d.client.request(SessionBranch, { sessionId, entryId: null })],
      ["session/path", d.client.request(SessionPath, { sessionId })],
      ["session/path (leafId)", d.client.request(SessionPath, { sessionId, leafId: "e" })],
      ["session/tree", d.client.request(SessionTree, { sessionId })],
      ["label/set", d.client.request(LabelSet, { sessionId, targetId: "e", label: "x" })],
      ["context/build", d.client.request(ContextBuild, { sessionId })],
      ["context/usage", d.client.request(ContextUsage, { sessionId, contextWindow: 1000 })],
    ];
    for (const [method, call] of calls) {
      const error = await rpcError(call);
      expect({ method, code: error.code, dataCode: error.data?.code }).toEqual({ method, code: -31999, dataCode: "session_not_found" });
    }
  });
});
