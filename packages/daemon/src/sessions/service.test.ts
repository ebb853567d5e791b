import type { EntryInput, SessionEntry, TreeNode } from "@base-context/protocol";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { AppError } from "../errors.js";
import type { SessionStore } from "../store/index.js";
import { ENGINES, useTestStores, writeLockStats } from "../store/test-support.js";
import { FakeCounter, sequentialIds } from "./fixtures/test-helpers.js";
import { SessionService } from "./service.js";

const user = (text: string): EntryInput => ({ type: "message", message: { role: "user", content: text } });
const assistant = (text: string): EntryInput => ({
  type: "message",
  message: { role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m" },
});

async function appError(run: () => Promise<unknown>): Promise<AppError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

/** The tree as nested [id, label?, isLeaf?] tuples, easy to compare. */
function shape(nodes: TreeNode[]): unknown[] {
  return nodes.map((node) => [node.entry.id, node.label ?? null, node.isLeaf ?? false, shape(node.children)]);
}

describe.each(ENGINES)("SessionService on %s", (engine) => {
  const stores = useTestStores(engine);
  let store: SessionStore;
  let counter: FakeCounter;
  let sessions: SessionService;
  let sessionId: string;

  const setUp = (delayMs?: (entry: SessionEntry) => number) => {
    const ids = sequentialIds();
    store = stores.open({ ids });
    counter = new FakeCounter(delayMs);
    sessions = new SessionService(store, counter, { ids });
  };
  const append = async (entry: EntryInput, parentId?: string | null) =>
    (await sessions.append({ sessionId, entry, parentId })).entry;

  beforeEach(async () => {
    setUp();
    sessionId = (await sessions.create({ cwd: "/projects/app", name: "Main" })).session.id;
  });

  describe("create, get, delete", () => {
    it("creates a session with a header and no entries", async () => {
      const got = await sessions.get({ sessionId });
      expect(got).toEqual({
        session: { id: sessionId, cwd: "/projects/app", createdAt: expect.any(String), name: "Main" },
        leafId: null,
        entryCount: 0,
      });
    });

    it("keeps a client-chosen id and refuses it twice", async () => {
      await sessions.create({ cwd: "/x", id: "chosen", parentSession: "parent-1" });
      expect((await sessions.get({ sessionId: "chosen" })).session.parentSession).toBe("parent-1");
      expect((await appError(() => sessions.create({ cwd: "/x", id: "chosen" }))).code).toBe("session_exists");
    });

    it("takes the display name from the latest session_info entry", async () => {
      await append({ type: "session_info", name: "  Renamed  " });
      expect((await sessions.get({ sessionId })).session.name).toBe("Renamed");
    });

    it("deletes a session with everything in it", async () => {
      const hi = await append(user("hi"));
      await sessions.setLabel({ sessionId, targetId: hi.id, label: "x" });
      expect(await sessions.delete({ sessionId })).toEqual({});
      expect(store.labels(sessionId).size).toBe(0);
      expect(store.getEntry(sessionId, hi.id)).toBeUndefined();
      expect((await appError(() => sessions.get({ sessionId }))).code).toBe("session_not_found");
      expect((await appError(() => sessions.delete({ sessionId }))).code).toBe("session_not_found");
    });
  });

  describe("append", () => {
    it("returns the entry, the new leaf and its token count, and stores the count with the next write", async () => {
      const result = await sessions.append({ sessionId, entry: user("hello there") });
      expect(result.leafId).toBe(result.entry.id);
      expect(result.tokens).toBe(FakeCounter.expected(result.entry));
      // Known to this process (no second count) before it is written.
      expect(await sessions.getEntry({ sessionId, entryId: result.entry.id })).toEqual({ entry: result.entry, tokens: result.tokens });
      expect(counter.counted).toBe(1);
      store.flushDeferredWrites();
      expect(store.getEntry(sessionId, result.entry.id)!.tokens).toBe(result.tokens);
    });

    it("takes the write lock once per append: its counts ride along with the next write", async () => {
      const before = writeLockStats(store).transactions;
      const replies: Awaited<ReturnType<typeof sessions.append>>[] = [];
      for (let index = 0; index < 20; index++) replies.push(await sessions.append({ sessionId, entry: user(`message ${index}`) }));
      // 20 appends, 20 transactions; each carried the counts of the append before it.
      expect(writeLockStats(store).transactions - before).toBe(20);
      expect(replies.slice(0, -1).map((reply) => store.getEntry(sessionId, reply.entry.id)!.tokens)).toEqual(
        replies.slice(0, -1).map((reply) => reply.tokens),
      );
      // The last one's are written on their own a moment later (or with close()).
      expect(store.getEntry(sessionId, replies[19]!.entry.id)!.tokens).toBeNull();
      await vi.waitFor(() => expect(store.getEntry(sessionId, replies[19]!.entry.id)!.tokens).toBe(replies[19]!.tokens));
      expect(writeLockStats(store).transactions - before).toBe(21);
    });

    it("applies appends in arrival order even when earlier counts resolve later", async () => {
      await store.close();
      // The first message is "huge": its count takes much longer than the others'.
      setUp((entry) => (JSON.stringify(entry).includes("huge") ? 80 : 1));
      sessionId = (await sessions.create({ cwd: "/w", id: "ordered" })).session.id;
      const replies = await Promise.all([append(user("huge")), append(user("second")), append(user("third"))]);
      expect(replies.map((entry) => entry.parentId)).toEqual([null, replies[0]!.id, replies[1]!.id]);
      const path = (await sessions.path({ sessionId })).entries;
      expect(path.map((entry) => entry.id)).toEqual(replies.map((entry) => entry.id));
    });

    it("answers a retried requestId with the first result and writes nothing", async () => {
      const first = await sessions.append({ sessionId, entry: user("once"), requestId: "r1" });
      const retry = await sessions.append({ sessionId, entry: user("changed"), requestId: "r1" });
      expect(retry).toEqual(first);
      const many = await sessions.appendMany({ sessionId, entries: [user("a"), assistant("b")], requestId: "r2" });
      expect(await sessions.appendMany({ sessionId, entries: [user("x")], requestId: "r2" })).toEqual(many);
      expect((await sessions.get({ sessionId })).entryCount).toBe(3);
    });

    it("appends many entries as one chain and stores their counts", async () => {
      const result = await sessions.appendMany({ sessionId, entries: [user("a"), assistant("b")] });
      expect(result.entries[1]!.parentId).toBe(result.entries[0]!.id);
      expect(result.leafId).toBe(result.entries[1]!.id);
      store.flushDeferredWrites();
      for (const entry of result.entries) expect(store.getEntry(sessionId, entry.id)!.tokens).toBe(FakeCounter.expected(entry));
    });

    it("stores counts given on the spot with the entries, in the append's own transaction", async () => {
      const onTheSpot = Object.assign(counter, {
        countEntriesNow: (entries: readonly EntryInput[]) =>
          entries.map((entry) => (JSON.stringify(entry).includes("big") ? undefined : 5)).includes(undefined)
            ? undefined
            : entries.map(() => 5),
      });
      const updates: string[][] = [];
      const setTokensSoon = store.setTokensSoon.bind(store);
      store.setTokensSoon = (id, counts, onDone) => {
        if (counts.length > 0) updates.push(counts.map((count) => count.id));
        setTokensSoon(id, counts, onDone);
      };
      const result = await sessions.append({ sessionId, entry: user("small") });
      expect(result.tokens).toBe(5);
      expect(store.getEntry(sessionId, result.entry.id)!.tokens).toBe(5);
      expect(onTheSpot.counted).toBe(0);
      expect(updates).toEqual([]);
      // Declined: counted after the write, both counts handed to the next write together.
      const declined = await sessions.appendMany({ sessionId, entries: [user("small"), user("big")] });
      expect(updates).toEqual([declined.entries.map((entry) => entry.id)]);
      store.flushDeferredWrites();
      expect(declined.entries.map((entry) => store.getEntry(sessionId, entry.id)!.tokens)).toEqual(
        declined.entries.map(FakeCounter.expected),
      );
    });

    it("computes a count that is missing (e.g. lost in a crash) when it is read", async () => {
      const outcome = store.append({ sessionId, entries: [user("never counted")] });
      if (outcome.status !== "appended") throw new Error("expected an append");
      const entry = outcome.entries[0]!.entry;
      expect(store.getEntry(sessionId, entry.id)!.tokens).toBeNull();
      const context = await sessions.getContextPath(sessionId);
      expect(context.entries[0]!.tokens).toBe(FakeCounter.expected(entry));
      expect(store.getEntry(sessionId, entry.id)!.tokens).toBe(FakeCounter.expected(entry));
    });
  });

  describe("branch, path, tree, labels", () => {
    it("moves the leaf without appending, and to null before the first entry", async () => {
      const a = await append(user("a"));
      await append(assistant("b"));
      expect(await sessions.branch({ sessionId, entryId: a.id })).toEqual({ leafId: a.id });
      const b2 = await append(assistant("b2"));
      expect(b2.parentId).toBe(a.id);
      expect(await sessions.branch({ sessionId, entryId: null })).toEqual({ leafId: null });
      expect((await sessions.path({ sessionId })).entries).toEqual([]);
      expect((await appError(() => sessions.branch({ sessionId, entryId: "ghost" }))).code).toBe("entry_not_found");
    });

    it("returns the path root → leaf, or to a given entry", async () => {
      const a = await append(user("a"));
      const b = await append(assistant("b"));
      await sessions.branch({ sessionId, entryId: a.id });
      const c = await append(assistant("c"));
      expect((await sessions.path({ sessionId })).entries.map((entry) => entry.id)).toEqual([a.id, c.id]);
      expect((await sessions.path({ sessionId, leafId: b.id })).entries.map((entry) => entry.id)).toEqual([a.id, b.id]);
    });

    it("builds the tree with children in time order, labels and the leaf marked", async () => {
      const a = await append(user("a"));
      const b = await append(assistant("b"));
      await sessions.branch({ sessionId, entryId: a.id });
      const c = await append(assistant("c"));
      const label = (await sessions.setLabel({ sessionId, targetId: b.id, label: "first try" })).entry;
      const tree = await sessions.tree({ sessionId });
      expect(tree.leafId).toBe(label.id);
      expect(shape(tree.roots)).toEqual([
        [a.id, null, false, [
          [b.id, "first try", false, []],
          [c.id, null, false, [[label.id, null, true, []]]],
        ]],
      ]);
    });

    it("sends the tree flat on request, and refuses to nest one too deep to serialize", async () => {
      const many = Array.from({ length: 1001 }, (_, i) => user(`m${i}`));
      const { entries, leafId } = await sessions.appendMany({ sessionId, entries: many });
      await sessions.setLabel({ sessionId, targetId: entries[0]!.id, label: "start" });
      const flat = await sessions.tree({ sessionId, flat: true });
      expect(flat.roots).toEqual([]);
      expect(flat.nodes).toHaveLength(1002);
      expect(flat.nodes![0]).toEqual({ entry: entries[0], label: "start" });
      expect(flat.nodes![1001]).toMatchObject({ entry: { type: "label" }, isLeaf: true });
      expect(JSON.parse(JSON.stringify(flat)).nodes[1000].entry.id).toBe(leafId);
      await expect(sessions.tree({ sessionId })).rejects.toMatchObject({ code: "not_supported" });
    });

    it("sets and clears labels through label entries; the latest wins", async () => {
      const a = await append(user("a"));
      const set = (await sessions.setLabel({ sessionId, targetId: a.id, label: "one" })).entry;
      expect(set).toMatchObject({ type: "label", targetId: a.id, label: "one" });
      await sessions.setLabel({ sessionId, targetId: a.id, label: "two" });
      expect(store.label(sessionId, a.id)).toBe("two");
      const cleared = (await sessions.setLabel({ sessionId, targetId: a.id, label: null })).entry;
      expect(cleared).not.toHaveProperty("label");
      expect(store.label(sessionId, a.id)).toBeUndefined();
      expect((await appError(() => sessions.setLabel({ sessionId, targetId: "ghost", label: "x" }))).code).toBe("entry_not_found");
    });
  });

  describe("fork", () => {
    it("copies the path root → entry with the same ids and carries the labels of that path", async () => {
      const a = await append(user("question"));
      const b = await append(assistant("answer"));
      await sessions.setLabel({ sessionId, targetId: a.id, label: "start" }); // on the path, copied as is
      const c = await append(user("follow-up"));
      await sessions.setLabel({ sessionId, targetId: b.id, label: "good answer" }); // after c: must be re-created
      await sessions.setLabel({ sessionId, targetId: c.id, label: "not on the fork path" });

      const forked = (await sessions.fork({ sessionId, entryId: c.id })).session;
      expect(forked.parentSession).toBe(sessionId);
      expect(forked.cwd).toBe("/projects/app");
      expect(forked.name).toBe("Main");
      const path = (await sessions.path({ sessionId: forked.id })).entries;
      expect(path.slice(0, 4).map((entry) => entry.id)).toEqual([a.id, b.id, expect.any(String), c.id]);
      expect(path.slice(4)).toEqual([
        expect.objectContaining({ type: "label", targetId: b.id, label: "good answer" }),
        expect.objectContaining({ type: "label", targetId: c.id, label: "not on the fork path" }),
      ]);
      expect(store.labels(forked.id)).toEqual(
        new Map([
          [a.id, "start"],
          [b.id, "good answer"],
          [c.id, "not on the fork path"],
        ]),
      );
      const got = await sessions.get({ sessionId: forked.id });
      expect(got.entryCount).toBe(6);
      expect(got.leafId).toBe(path[5]!.id);
      expect((await sessions.list({ query: "question" })).sessions.map((s) => s.id).sort()).toEqual([forked.id, sessionId].sort());
    });

    it("leaves out labels of entries that are not on the forked path", async () => {
      const a = await append(user("a"));
      const b = await append(assistant("b"));
      await sessions.setLabel({ sessionId, targetId: b.id, label: "later" });
      const forked = (await sessions.fork({ sessionId, entryId: a.id })).session;
      expect((await sessions.path({ sessionId: forked.id })).entries.map((entry) => entry.id)).toEqual([a.id]);
      expect(store.labels(forked.id).size).toBe(0);
    });

    it("refuses an unknown entry", async () => {
      expect((await appError(() => sessions.fork({ sessionId, entryId: "ghost" }))).code).toBe("entry_not_found");
    });
  });

  describe("list", () => {
    it("lists newest modified first with the first user message, filters by cwd and query, and pages", async () => {
      await append(user("Fix the flaky login test"));
      const other = (await sessions.create({ cwd: "/projects/other", name: "Docs" })).session.id;
      await sessions.append({
        sessionId: other,
        entry: { type: "message", message: { role: "user", content: [{ type: "text", text: "x".repeat(300) }] } },
      });
      const third = (await sessions.create({ cwd: "/projects/app" })).session.id;

      const all = await sessions.list({});
      expect(all.sessions.map((s) => s.id)).toEqual([third, other, sessionId]);
      expect(all.nextCursor).toBeUndefined();
      expect(all.sessions[2]).toMatchObject({ name: "Main", entryCount: 1, firstMessage: "Fix the flaky login test" });
      expect(all.sessions[1]!.firstMessage).toBe(`${"x".repeat(200)}…`);

      expect((await sessions.list({ cwd: "/projects/app" })).sessions.map((s) => s.id)).toEqual([third, sessionId]);
      expect((await sessions.list({ query: "FLAKY" })).sessions.map((s) => s.id)).toEqual([sessionId]);
      expect((await sessions.list({ query: "docs" })).sessions.map((s) => s.id)).toEqual([other]);
      expect((await sessions.list({ query: "100%" })).sessions).toEqual([]);

      const page1 = await sessions.list({ limit: 2 });
      expect(page1.sessions.map((s) => s.id)).toEqual([third, other]);
      const page2 = await sessions.list({ limit: 2, cursor: page1.nextCursor });
      expect(page2.sessions.map((s) => s.id)).toEqual([sessionId]);
      expect(page2.nextCursor).toBeUndefined();
      await expect(sessions.list({ cursor: "garbage" })).rejects.toMatchObject({ data: { code: "invalid_cursor" } });
    });
  });

  describe("context path", () => {
    it("returns the entries from the compaction's first kept entry to the leaf with counts and the latest settings", async () => {
      await append({ type: "model_change", provider: "openai", modelId: "gpt-5" });
      await append({ type: "thinking_level_change", thinkingLevel: "low" });
      await append(user("old question"));
      const kept = await append(user("kept question"));
      const answer = await append(assistant("kept answer"));
      const compaction = await append({ type: "compaction", summary: "S", firstKeptEntryId: kept.id, tokensBefore: 500 });
      const last = await append(user("new question"));

      const context = await sessions.getContextPath(sessionId);
      expect(context.leafId).toBe(last.id);
      expect(context.entries.map((counted) => counted.entry.id)).toEqual([kept.id, answer.id, compaction.id, last.id]);
      for (const counted of context.entries) expect(counted.tokens).toBe(FakeCounter.expected(counted.entry));
      expect(context.compaction?.id).toBe(compaction.id);
      expect(context.modelChange).toMatchObject({ provider: "openai", modelId: "gpt-5" });
      expect(context.thinkingLevelChange).toMatchObject({ thinkingLevel: "low" });
      expect(context.modelEntry?.id).toBe(answer.id);
      expect((await sessions.getContextPath(sessionId, kept.id)).entries).toHaveLength(4);
      expect(await sessions.getContextPath(sessionId, null)).toEqual({ leafId: null, entries: [] });
    });
  });
});
