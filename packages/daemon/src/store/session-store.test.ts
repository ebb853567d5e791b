import Database from "better-sqlite3";
import type { EntryInput } from "@base-context/protocol";
import { statSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { AppError } from "../errors.js";
import { sequentialIds } from "../sessions/fixtures/test-helpers.js";
import type { OwnerProbe } from "./owner.js";
import { SessionStore } from "./session-store.js";
import { ENGINES, useTestStores } from "./test-support.js";

const user = (text: string): EntryInput => ({ type: "message", message: { role: "user", content: text } });
const assistant = (text: string): EntryInput => ({
  type: "message",
  message: { role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m" },
});

function appendOne(store: SessionStore, sessionId: string, entry: EntryInput, parentId?: string | null) {
  const outcome = store.append({ sessionId, entries: [entry], parentId });
  if (outcome.status !== "appended") throw new Error(`unexpected ${outcome.status}`);
  return outcome.entries[0]!.entry;
}

function appError(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

describe.each(ENGINES)("SessionStore on %s", (engine) => {
  const stores = useTestStores(engine);
  let store: SessionStore;
  // Each call opens another store on the test's database: another daemon, as far as the store can tell.
  const open = (ids = sequentialIds()) => stores.open({ ids });

  beforeEach(() => {
    store = open();
    store.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
  });

  describe("append", () => {
    it("chains each entry under the current leaf and moves the leaf in the same transaction", () => {
      const a = appendOne(store, "s", user("a"));
      const b = appendOne(store, "s", assistant("b"));
      expect(a.parentId).toBeNull();
      expect(b.parentId).toBe(a.id);
      expect(store.getSession("s")).toMatchObject({ leafId: b.id, entryCount: 2, firstMessage: "a" });
      expect(Object.keys(b).slice(0, 4)).toEqual(["type", "id", "parentId", "timestamp"]);
    });

    it("appends several entries as one chain in one transaction", () => {
      const outcome = store.append({ sessionId: "s", entries: [user("1"), assistant("2"), user("3")] });
      expect(outcome.status).toBe("appended");
      if (outcome.status !== "appended") return;
      const [e1, e2, e3] = outcome.entries.map((stored) => stored.entry);
      expect([e1!.parentId, e2!.parentId, e3!.parentId]).toEqual([null, e1!.id, e2!.id]);
      expect(outcome.leafId).toBe(e3!.id);
    });

    it("writes nothing when one entry of a batch is invalid", () => {
      const a = appendOne(store, "s", user("a"));
      const error = appError(() =>
        store.append({ sessionId: "s", entries: [user("b"), { type: "label", targetId: "missing", label: "x" }] }),
      );
      expect(error.code).toBe("invalid_entry");
      expect(store.getSession("s")).toMatchObject({ leafId: a.id, entryCount: 1 });
    });

    it("attaches to an explicit parent, or starts a new root with parentId null", () => {
      const a = appendOne(store, "s", user("a"));
      appendOne(store, "s", assistant("b"));
      const sibling = appendOne(store, "s", assistant("b'"), a.id);
      const root = appendOne(store, "s", user("second root"), null);
      expect(sibling.parentId).toBe(a.id);
      expect(root.parentId).toBeNull();
      expect(store.getSession("s")!.leafId).toBe(root.id);
    });

    it("rejects an explicit parent that is not in the session", () => {
      const error = appError(() => appendOne(store, "s", user("a"), "nope"));
      expect(error.code).toBe("invalid_entry");
      expect(error.message).toMatch(/parentId "nope"/);
    });

    it("keeps an explicit id and refuses one that exists", () => {
      const a = appendOne(store, "s", { ...user("a"), id: "custom-1" });
      expect(a.id).toBe("custom-1");
      expect(appError(() => appendOne(store, "s", { ...user("b"), id: "custom-1" })).code).toBe("entry_exists");
    });

    it("retries a generated id that collides with an existing one", async () => {
      await store.close();
      const ids = ["aaaaaaaa", "aaaaaaaa", "bbbbbbbb"];
      store = open({ ...sequentialIds(), entryId: () => ids.shift()! });
      const first = appendOne(store, "s", user("a"));
      const second = appendOne(store, "s", user("b"));
      expect([first.id, second.id]).toEqual(["aaaaaaaa", "bbbbbbbb"]);
    });

    it("requires a label's target and a compaction's first kept entry on its path", () => {
      const a = appendOne(store, "s", user("a"));
      appendOne(store, "s", assistant("b"));
      const otherBranch = appendOne(store, "s", assistant("c"), a.id);
      store.setLeaf("s", a.id);
      expect(appError(() => appendOne(store, "s", { type: "label", targetId: "ghost", label: "x" })).code).toBe("invalid_entry");
      const compaction = (firstKeptEntryId: string): EntryInput => ({
        type: "compaction",
        summary: "s",
        firstKeptEntryId,
        tokensBefore: 10,
      });
      expect(appError(() => appendOne(store, "s", compaction(otherBranch.id))).message).toMatch(/not on the path/);
      expect(appendOne(store, "s", compaction(a.id)).type).toBe("compaction");
    });

    it("refuses an unknown session", () => {
      expect(appError(() => appendOne(store, "ghost", user("a"))).code).toBe("session_not_found");
    });

    it("is stale, writing nothing, when the precondition entry left the current path", () => {
      const a = appendOne(store, "s", user("a"));
      const b = appendOne(store, "s", assistant("b"));
      const kept = store.append({ sessionId: "s", entries: [user("c")], onlyIfOnPath: a.id });
      expect(kept.status).toBe("appended");
      store.setLeaf("s", a.id);
      const stale = store.append({ sessionId: "s", entries: [user("d")], onlyIfOnPath: b.id });
      expect(stale).toEqual({ status: "stale", leafId: a.id });
      expect(store.getSession("s")!.entryCount).toBe(3);
    });
  });

  describe("token counts", () => {
    it("stores the counts an append carries, in the same transaction, and NULL for the others", () => {
      const outcome = store.append({ sessionId: "s", entries: [user("a"), user("b"), user("c")], tokens: [7, null] });
      if (outcome.status !== "appended") throw new Error("expected an append");
      expect(outcome.entries.map((stored) => stored.tokens)).toEqual([7, null, null]);
      expect(outcome.entries.map((stored) => store.getEntry("s", stored.entry.id)!.tokens)).toEqual([7, null, null]);
    });

    it("stores a count given with its row's seq only on that row, not on a later row with the same id", () => {
      const outcome = store.append({ sessionId: "s", entries: [{ ...user("first"), id: "e1" }] });
      if (outcome.status !== "appended") throw new Error(outcome.status);
      const counted = outcome.entries[0]!;
      // Another daemon deletes the session and writes it again, with an entry of the same id.
      const other = open();
      other.deleteSession("s");
      other.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
      other.createSession({ id: "t", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
      other.append({ sessionId: "t", entries: [user("moves the seqs on")] });
      other.append({ sessionId: "s", entries: [{ ...user("another text entirely"), id: "e1" }] });
      store.setTokensMany("s", [{ id: "e1", seq: counted.seq, tokens: 99 }]);
      expect(store.getEntry("s", "e1")!.tokens).toBeNull();
      const again = store.getEntry("s", "e1")!;
      store.setTokensMany("s", [{ id: "e1", seq: again.seq, tokens: 7 }]);
      expect(store.getEntry("s", "e1")!.tokens).toBe(7);
    });

    it("lists entries without a count newest first, page by page, and forgets them once counted", () => {
      const ids = ["a", "b", "c", "d", "e"].map((text) => appendOne(store, "s", user(text)).id);
      store.setTokensMany("s", [{ id: ids[3]!, tokens: 4 }]);
      const first = store.uncountedEntries("s", 2);
      expect(first.map((stored) => stored.entry.id)).toEqual([ids[4], ids[2]]);
      const second = store.uncountedEntries("s", 2, first[1]!.seq);
      expect(second.map((stored) => stored.entry.id)).toEqual([ids[1], ids[0]]);
      expect(store.sessionsWithUncountedEntries()).toEqual(["s"]);
      store.setTokensMany("s", [...first, ...second].map((stored, index) => ({ id: stored.entry.id, tokens: index })));
      expect(store.uncountedEntries("s", 10)).toEqual([]);
      expect(store.sessionsWithUncountedEntries()).toEqual([]);
      expect(store.getEntry("s", ids[0]!)!.tokens).toBe(3);
    });

    it("does not offer the entries of a session that is still being imported", () => {
      const target = store.beginImport({ id: "importing", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
      target.insertBatch([
        {
          line: 2,
          entry: { type: "session_info", id: "x1", parentId: null, timestamp: "2026-03-01T12:00:01.000Z", name: "n" },
          tokens: null,
        },
      ]);
      expect(store.sessionsWithUncountedEntries()).toEqual([]);
      target.finish();
      expect(store.sessionsWithUncountedEntries()).toEqual(["importing"]);
    });
  });

  describe("imports left by a process that is gone", () => {
    const half = () => {
      const target = store.beginImport({ id: "half", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
      target.insertBatch([
        {
          line: 2,
          entry: { type: "session_info", id: "x1", parentId: null, timestamp: "2026-03-01T12:00:01.000Z", name: "n" },
          tokens: null,
        },
      ]);
    };
    const reopen = (probe: OwnerProbe) => stores.open({ ids: sequentialIds(), ownerProbe: probe });
    const newSession = { id: "half", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 };

    it("keeps a live importer's session id taken", () => {
      half();
      expect(appError(() => store.createSession(newSession)).code).toBe("session_exists");
      expect(store.reclaimAbandonedImports()).toBe(0);
    });

    // On SQLite an owner is a process of this machine, probed by pid (faked here); on PostgreSQL a lease.
    it.skipIf(engine === "postgres")("removes them when a store opens (the importer's pid is gone)", async () => {
      half();
      const other = reopen({ exists: () => false, startOf: () => null });
      try {
        expect(other.getSession("half")).toBeUndefined();
        expect(other.createSession(newSession).id).toBe("half");
      } finally {
        await other.close();
      }
    });

    it.skipIf(engine === "postgres")("removes them on demand, when the id is asked for again (the pid now belongs to another process)", async () => {
      const other = reopen({ exists: () => true, startOf: () => "another-process:1" });
      try {
        half();
        // Created by `store` after `other` opened: found when the id is taken again, not at start.
        expect(other.createSession(newSession).id).toBe("half");
        expect(other.path("half")).toEqual([]);
        // session/import's path: the id of a half-import is taken over the same way.
        store.beginImport({ ...newSession, id: "again" });
        expect(other.beginImport({ ...newSession, id: "again" }).sessionId).toBe("again");
      } finally {
        await other.close();
      }
    });
  });

  describe.runIf(engine === "postgres")("imports left by a daemon whose lease is gone", () => {
    const newSession = { id: "half", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 };
    const entry = { type: "session_info" as const, id: "x1", parentId: null, timestamp: "2026-03-01T12:00:01.000Z", name: "n" };

    it("keeps a half-import while its daemon runs, and takes it over once that daemon's lease is gone", async () => {
      const importer = open();
      importer.beginImport(newSession).insertBatch([{ line: 2, entry, tokens: null }]);
      const other = open();
      expect(other.getSession("half")).toBeUndefined();
      expect(appError(() => other.createSession(newSession)).code).toBe("session_exists");
      expect(other.reclaimAbandonedImports()).toBe(0);

      await importer.close(); // its lease ends with it, as when its process dies
      expect(other.createSession(newSession).id).toBe("half");
      expect(other.path("half")).toEqual([]);
    });

    it("removes them when a store opens after the importing daemon ended", async () => {
      const importer = open();
      importer.beginImport(newSession).insertBatch([{ line: 2, entry, tokens: null }]);
      await importer.close();
      const later = open();
      expect(later.listSessions({ limit: 10 }).map((session) => session.id)).toEqual(["s"]);
      expect(later.createSession(newSession).id).toBe("half");
    });
  });

  // insertBatchAsync: on PostgreSQL a fresh import's batches read nothing first (ids and leaf kept
  // in memory, the session's row checked on the server) and their search rows follow apart.
  describe("imports written without blocking", () => {
    const at = (second: number) => `2026-03-01T12:00:${String(second).padStart(2, "0")}.000Z`;
    const message = (id: string, parentId: string | null, text: string, second: number) => ({
      line: second,
      entry: { type: "message" as const, id, parentId, timestamp: at(second), message: { role: "user" as const, content: text } },
      tokens: null,
    });

    it("writes batches in order, finds duplicates across them, and searches the entries once finished", async () => {
      const target = store.beginImport({ id: "imp", cwd: "/p", createdAt: at(0), modifiedMs: 0 });
      const one = await target.insertBatchAsync([message("a", null, "alpha quartz", 1), message("b", "a", "beta", 2), message("x", "a", "side", 3)]);
      // Its parent "b" is not the first batch's last entry: it is read. The id "a" is known taken.
      const two = await target.insertBatchAsync([message("a", null, "again", 4), message("c", "b", "gamma quartz", 5)]);
      expect(one).toEqual({ skipped: [], present: 0, rerooted: [] });
      expect(two).toEqual({ skipped: [{ line: 4, reason: 'duplicate entry id "a"' }], present: 0, rerooted: [] });
      await target.searchWritten();
      const session = target.finish();
      expect(session).toMatchObject({ entryCount: 4, leafId: "c" });
      expect(store.path("imp").map((stored) => stored.entry.id)).toEqual(["a", "b", "c"]);
      const match = store.searchSessions({ text: "quartz", limit: 5, hitsPerSession: 5 }).find((found) => found.sessionId === "imp");
      expect(match?.hits.map((hit) => hit.entryId).sort()).toEqual(["a", "c"]);
    });

    it.runIf(engine === "postgres")("fails a batch of an import another daemon took over, writing none of it", async () => {
      const target = store.beginImport({ id: "taken", cwd: "/p", createdAt: at(0), modifiedMs: 0 });
      await target.insertBatchAsync([message("a", null, "one", 1)]);
      // Another daemon found this one dead, removed the half-import and imported the same id anew.
      const other = open();
      other.engine.write(() => other.engine.sql.get("DELETE FROM sessions WHERE id = ?").run("taken"), "taken");
      other.beginImport({ id: "taken", cwd: "/other", createdAt: at(0), modifiedMs: 0 });
      await expect(target.insertBatchAsync([message("b", null, "two", 2)])).rejects.toThrow(/session "taken" disappeared during its import/);
      expect(other.engine.sql.get<{ n: number }>("SELECT count(*) AS n FROM entries WHERE session_id = ?").get("taken")).toEqual({ n: 0 });
    });

    it.runIf(engine === "postgres")("fails an import whose search rows the server refuses; its abort leaves nothing", async () => {
      // Search rows are written apart, after their batch has committed: their failure is the import's.
      refuseOnServer(store, "entries_fts", "INSERT", "NEW.session_id = 'refused'", "search row refused");
      const target = store.beginImport({ id: "refused", cwd: "/p", createdAt: at(0), modifiedMs: 0 });
      await target.insertBatchAsync([message("a", null, "one", 1)]);
      await expect(target.searchWritten()).rejects.toThrow(/search row refused/);
      target.abort();
      expect(store.getSession("refused")).toBeUndefined();
      expect(store.engine.sql.get<{ n: number }>("SELECT count(*) AS n FROM entries WHERE session_id = ?").get("refused")).toEqual({ n: 0 });
    });

    it.runIf(engine === "postgres")("writes the search rows of two of its batches at once, never of three", async () => {
      // Each search row (one a batch) holds its transaction until it has seen another search
      // transaction running beside it (at least 0.3 s, at most 2), and notes the most it saw.
      store.engine.write(() => {
        const sql = store.engine.sql;
        sql.get("CREATE TABLE bc_test_search_running (running BIGINT)").run();
        const body = `DECLARE seen BIGINT; most BIGINT := 0;
        BEGIN
          FOR step IN 1..40 LOOP
            PERFORM pg_stat_clear_snapshot();
            SELECT count(*) INTO seen FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%INSERT INTO entries_fts%';
            most := greatest(most, seen);
            EXIT WHEN most >= 2 AND step >= 6;
            PERFORM pg_sleep(0.05);
          END LOOP;
          INSERT INTO bc_test_search_running VALUES (most);
          RETURN NEW;
        END`;
        sql.get(`CREATE FUNCTION bc_test_search_running() RETURNS trigger LANGUAGE plpgsql AS $$ ${body} $$`).run();
        sql.get("CREATE TRIGGER bc_test_search_running BEFORE INSERT ON entries_fts FOR EACH ROW EXECUTE FUNCTION bc_test_search_running()").run();
      });
      const target = store.beginImport({ id: "overlap", cwd: "/p", createdAt: at(0), modifiedMs: 0 });
      for (let batch = 1; batch <= 5; batch++) await target.insertBatchAsync([message(`e${batch}`, null, `words of batch ${batch}`, batch)]);
      await target.searchWritten();
      const running = store.engine.sql.get<{ running: string }>("SELECT running FROM bc_test_search_running").all().map((row) => Number(row.running));
      expect(running).toHaveLength(5);
      expect(Math.max(...running)).toBe(2);
    });
  });

  it.runIf(engine === "postgres")("makes an append again the blocking way when a token count riding along its awaited commit fails", async () => {
    // The counts an append carries (setTokensSoon) are sent in savepoints without waiting; one the
    // server refuses fails the whole commit, so the append is made again with each count on its own.
    const first = appendOne(store, "s", user("counted later"));
    refuseOnServer(store, "entries", "UPDATE", "NEW.tokens = 4242", "count refused");
    const stored: boolean[] = [];
    store.setTokensSoon("s", [{ id: first.id, tokens: 4242 }], (written) => stored.push(written));
    const outcome = await store.appendAsync({ sessionId: "s", entries: [user("appended anyway")] });
    expect(outcome.status).toBe("appended");
    expect(stored).toEqual([false]);
    expect(store.path("s").map((entry) => [entry.entry.id, entry.tokens])).toEqual([
      [first.id, null],
      [outcome.status === "appended" ? outcome.leafId : "", null],
    ]);
  });

  describe("request ids", () => {
    it("replays the first result of a requestId without writing again", () => {
      const request = { id: "req-1", method: "entry/append" };
      const first = store.append({ sessionId: "s", entries: [user("a")], request });
      const again = store.append({ sessionId: "s", entries: [user("different params")], request });
      expect(again.status).toBe("replayed");
      if (first.status !== "appended" || again.status !== "replayed") return;
      expect(again.entries.map((stored) => stored.entry)).toEqual(first.entries.map((stored) => stored.entry));
      expect(again.leafId).toBe(first.leafId);
      expect(store.getSession("s")!.entryCount).toBe(1);
    });

    it("reports a requestId reused by another method as a conflict", () => {
      store.append({ sessionId: "s", entries: [user("a")], request: { id: "r", method: "entry/append" } });
      const error = appError(() =>
        store.append({ sessionId: "s", entries: [user("b")], request: { id: "r", method: "entry/appendMany" } }),
      );
      expect(error.code).toBe("request_id_conflict");
    });

    it("scopes request ids to their session", () => {
      store.createSession({ id: "t", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
      const request = { id: "same", method: "entry/append" };
      store.append({ sessionId: "s", entries: [user("a")], request });
      expect(store.append({ sessionId: "t", entries: [user("a")], request }).status).toBe("appended");
    });
  });

  describe("paths", () => {
    it("walks root → leaf (the current leaf by default, empty for null)", () => {
      const ids = [user("0"), assistant("1"), user("2"), assistant("3")].map((entry) => appendOne(store, "s", entry).id);
      expect(store.path("s", ids[3]!).map((stored) => stored.entry.id)).toEqual(ids);
      expect(store.path("s", ids[1]!).map((stored) => stored.depth)).toEqual([0, 1]);
      expect(store.path("s").map((stored) => stored.entry.id)).toEqual(ids);
      expect(store.path("s", null)).toEqual([]);
      expect(appError(() => store.path("s", "ghost")).code).toBe("entry_not_found");
    });

    it("answers session_not_found for an unknown session, whichever leaf is named", () => {
      const id = appendOne(store, "s", user("0")).id;
      expect(appError(() => store.path("missing", id)).code).toBe("session_not_found");
      expect(appError(() => store.path("missing", null)).code).toBe("session_not_found");
    });

    it("gives the context path from the latest compaction's first kept entry, with the settings entries before it", () => {
      const model = appendOne(store, "s", { type: "model_change", provider: "openai", modelId: "gpt-5" });
      const thinking = appendOne(store, "s", { type: "thinking_level_change", thinkingLevel: "high" });
      appendOne(store, "s", user("old"));
      const kept = appendOne(store, "s", user("kept"));
      const answer = appendOne(store, "s", assistant("answer"));
      const compaction = appendOne(store, "s", { type: "compaction", summary: "S", firstKeptEntryId: kept.id, tokensBefore: 99 });
      const after = appendOne(store, "s", user("after"));

      const path = store.contextPath("s");
      expect(path.entries.map((stored) => stored.entry.id)).toEqual([kept.id, answer.id, compaction.id, after.id]);
      expect(path.compaction?.entry.id).toBe(compaction.id);
      expect(path.modelChange?.entry.id).toBe(model.id);
      expect(path.modelEntry?.entry.id).toBe(answer.id); // pi also takes the model from assistant messages
      expect(path.thinkingLevelChange?.entry.id).toBe(thinking.id);
    });

    it("ignores a compaction that is not on the requested path", () => {
      const a = appendOne(store, "s", user("a"));
      const b = appendOne(store, "s", assistant("b"));
      appendOne(store, "s", { type: "compaction", summary: "S", firstKeptEntryId: b.id, tokensBefore: 1 });
      const other = appendOne(store, "s", assistant("b'"), a.id);
      const path = store.contextPath("s", other.id);
      expect(path.entries.map((stored) => stored.entry.id)).toEqual([a.id, other.id]);
      expect(path.compaction).toBeUndefined();
      expect(store.contextPath("s", null)).toEqual({ leafId: null, entries: [] });
    });

    it("moves the leaf with its request result in one write, only from the leaf the caller saw", () => {
      const a = appendOne(store, "s", user("a"));
      const b = appendOne(store, "s", assistant("b"));
      const request = { id: "nav-1", method: "tree/navigate", result: { navigate: { status: "moved" } } };
      // Someone else moved the leaf meanwhile: nothing is written, the leaf found is returned.
      expect(store.moveLeafIf("s", { from: a.id, to: null, request })).toEqual({ moved: false, leafId: b.id });
      expect(store.requireSession("s").leafId).toBe(b.id);
      expect(store.findRequestResult("s", "nav-1", "tree/navigate")).toBeUndefined();

      expect(store.moveLeafIf("s", { from: b.id, to: a.id, request })).toEqual({ moved: true });
      expect(store.requireSession("s").leafId).toBe(a.id);
      expect(store.findRequestResult("s", "nav-1", "tree/navigate")?.result).toEqual(request.result);
      expect(appError(() => store.moveLeafIf("s", { from: a.id, to: "ghost" })).code).toBe("entry_not_found");
      expect(store.requireSession("s").leafId).toBe(a.id);
    });

    it("moves the leaf only to an existing entry, or to null", () => {
      const a = appendOne(store, "s", user("a"));
      expect(appError(() => store.setLeaf("s", "ghost")).code).toBe("entry_not_found");
      store.setLeaf("s", null);
      expect(appendOne(store, "s", user("new root")).parentId).toBeNull();
      store.setLeaf("s", a.id);
      expect(store.getSession("s")!.leafId).toBe(a.id);
    });
  });

  describe("several connections on one file", () => {
    it("never loses an append or attaches one to a stale parent when two stores interleave", async () => {
      const other = open();
      try {
        const appended: string[] = [];
        for (let i = 0; i < 100; i++) {
          const writer = i % 3 === 0 ? other : store;
          appended.push(appendOne(writer, "s", user(`m${i}`)).id);
        }
        const leaf = store.getSession("s")!.leafId!;
        const path = other.path("s", leaf).map((stored) => stored.entry);
        expect(path.map((entry) => entry.id)).toEqual(appended);
        path.forEach((entry, index) => expect(entry.parentId).toBe(index === 0 ? null : appended[index - 1]));
      } finally {
        await other.close();
      }
    });
  });

  // The SQLite file's own write-ahead log (PostgreSQL checkpoints its WAL itself).
  describe.skipIf(engine === "postgres")("WAL checkpoints", () => {
    it("checkpoints from the worker so the WAL restarts instead of growing", async () => {
      const path = join(stores.folder, "wal.db");
      const walStore = new SessionStore({ path, ids: sequentialIds(), checkpoints: "worker" });
      try {
        walStore.createSession({ id: "w", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
        for (let i = 0; i < 300; i++) appendOne(walStore, "w", user(`message ${i} ${"x".repeat(500)}`));
        // SQLite's own checkpoints are off: the WAL file only grows, unless a checkpoint copied all
        // of it back, after which the next writer starts it again from its beginning. So an append
        // that leaves the file's size as it was is one the worker's checkpoint made room for.
        const walBytes = () => statSync(`${path}-wal`).size;
        let before = walBytes();
        await vi.waitFor(
          () => {
            appendOne(walStore, "w", user("after the checkpoint?"));
            const grew = walBytes() > before;
            before = walBytes();
            expect(grew).toBe(false);
          },
          { timeout: 20_000, interval: 50 },
        );
        const probe = new Database(path);
        const [result] = probe.pragma("wal_checkpoint(PASSIVE)") as { log: number }[];
        probe.close();
        expect(result!.log).toBeLessThan(50);
      } finally {
        await walStore.close();
      }
    });
  });
});

/** A trigger on the test's PostgreSQL database that fails `operation` on `table` when `when` holds. */
function refuseOnServer(store: SessionStore, table: string, operation: "INSERT" | "UPDATE", when: string, message: string): void {
  const name = `bc_test_refuse_${table}_${operation.toLowerCase()}`;
  store.engine.write(() => {
    const body = `BEGIN IF ${when} THEN RAISE EXCEPTION '${message}'; END IF; RETURN NEW; END`;
    store.engine.sql.get(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ ${body} $$`).run();
    store.engine.sql.get(`CREATE OR REPLACE TRIGGER ${name} BEFORE ${operation} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}()`).run();
  });
}
