import { describe, expect, it } from "vitest";
import { sequentialIds } from "../sessions/fixtures/test-helpers.js";
import type { PostgresEngine } from "./postgres/postgres-engine.js";
import { ENGINES, useTestStores } from "./test-support.js";

describe.each(ENGINES)("the store on %s", (engine) => {
  const stores = useTestStores(engine);

  it("creates, appends, reads paths and context paths, searches, forks, labels", () => {
    const store = stores.open({ ids: sequentialIds() });
    store.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
    const first = store.append({ sessionId: "s", entries: [{ type: "message", message: { role: "user", content: "hello themes" } }] });
    expect(first.status).toBe("appended");
    const second = store.append({
      sessionId: "s",
      entries: [{ type: "message", message: { role: "user", content: "second" } }],
      tokens: [5],
      request: { id: "r1", method: "entry/append" },
    });
    const replay = store.append({
      sessionId: "s",
      entries: [{ type: "message", message: { role: "user", content: "second" } }],
      request: { id: "r1", method: "entry/append" },
    });
    expect(replay.status).toBe("replayed");
    if (second.status !== "appended" || first.status !== "appended") throw new Error("not appended");
    expect(store.getSession("s")).toMatchObject({ entryCount: 2, leafId: second.leafId, firstMessage: "hello themes" });
    expect(store.path("s").map((stored) => stored.entry.id)).toEqual([first.leafId, second.leafId]);
    const context = store.contextPath("s");
    expect(context.entries.map((stored) => stored.tokens)).toEqual([null, 5]);
    expect(store.uncountedEntries("s", 10).map((stored) => stored.entry.id)).toEqual([first.leafId]);
    store.setTokensMany("s", [{ id: first.leafId, tokens: 3 }]);
    expect(store.sessionsWithUncountedEntries()).toEqual([]);
    expect([...store.entryJsonBySeq("s", context.entries.map((stored) => stored.seq).reverse())].flat().length).toBe(2);
    expect(store.searchSessions({ text: "theme", limit: 5, hitsPerSession: 2 }).map((match) => match.sessionId)).toEqual(["s"]);
    const label = store.append({ sessionId: "s", entries: [{ type: "label", targetId: first.leafId, label: "start" }] });
    expect(label.status).toBe("appended");
    expect(store.label("s", first.leafId)).toBe("start");
    const fork = store.fork("s", second.leafId, { id: "f", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 1, parentSession: "s" });
    expect(fork.entryCount).toBe(3);
    expect(store.labels("f").get(first.leafId)).toBe("start");
    expect(store.entryLinks("f")).toHaveLength(3);
    expect(store.moveLeafIf("s", { from: "nope", to: null })).toEqual({ moved: false, leafId: label.status === "appended" ? label.leafId : null });
    expect(store.listSessions({ limit: 10, query: "HELLO" }).map((session) => session.id).sort()).toEqual(["f", "s"]);
    expect(store.deleteSession("f")).toBe(true);
  });

  // The counter is the engine's own (sync-postgres.ts): statements sent, and waits for an answer.
  it.runIf(engine === "postgres")("appends in one round trip, a batch of entries in one, and falls back when another daemon moved the leaf", async () => {
    const a = stores.open({ ids: sequentialIds() });
    const bIds = sequentialIds();
    const b = stores.open({ ids: { ...bIds, entryId: () => `b${bIds.entryId()}` } });
    const traffic = (store: typeof a, work: () => unknown) => {
      const before = { ...(store.engine as PostgresEngine).traffic };
      work();
      const after = (store.engine as PostgresEngine).traffic;
      return { roundTrips: after.roundTrips - before.roundTrips, statements: after.statements - before.statements };
    };
    const message = (content: string) => ({ type: "message" as const, message: { role: "user" as const, content } });
    a.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
    a.append({ sessionId: "s", entries: [message("first: reads the leaf")] });
    // BEGIN, one statement for the session's lock, the leaf check, the entries, their search rows,
    // the session row and the requestId's result (bc_write_entries), COMMIT.
    const one = { sessionId: "s", entries: [message("one round trip")], request: { id: "r", method: "entry/append" } };
    expect(traffic(a, () => a.append(one))).toEqual({ roundTrips: 1, statements: 3 });
    const batch = Array.from({ length: 200 }, (_, i) => message(`batch ${i}`));
    expect(traffic(a, () => a.append({ sessionId: "s", entries: batch }))).toEqual({ roundTrips: 1, statements: 3 });
    // Committed on the event loop (the daemon's entry/append), that one statement goes alone.
    let alone: Promise<unknown> = Promise.resolve();
    const asyncOne = { sessionId: "s", entries: [message("one statement")], request: { id: "r2", method: "entry/append" } };
    expect(traffic(a, () => (alone = a.appendAsync(asyncOne)))).toEqual({ roundTrips: 1, statements: 1 });
    expect(await alone).toMatchObject({ status: "appended" });
    expect(a.append({ ...asyncOne, entries: [message("retried")] })).toMatchObject({ status: "replayed" });
    // Another daemon appends: a's expected leaf is stale, the server says so, a appends the ordinary way.
    b.append({ sessionId: "s", entries: [message("b moves the leaf")] });
    const after = a.append({ sessionId: "s", entries: [message("a after b")] });
    if (after.status !== "appended") throw new Error(after.status);
    const path = a.path("s");
    expect(path.at(-1)!.entry.id).toBe(after.leafId);
    expect(path.at(-2)!.entry).toMatchObject({ message: { content: "b moves the leaf" } });
    expect(path).toHaveLength(205);
    expect(after.entries[0]!.seq).toBe(path.at(-1)!.seq);
    // A requestId already answered is replayed, not written twice.
    expect(a.append({ sessionId: "s", entries: [message("retry")], request: { id: "r", method: "entry/append" } }).status).toBe("replayed");
    expect(a.getSession("s")!.entryCount).toBe(205);
    // A given id already taken: entry_exists, as the ordinary append says.
    expect(() => a.append({ sessionId: "s", entries: [{ ...message("dup"), id: path[0]!.entry.id }] })).toThrow(/already has an entry/);
    expect(a.searchSessions({ text: "batch", limit: 5, hitsPerSession: 1 }).map((match) => match.sessionId)).toEqual(["s"]);
  });

  // SessionStore.appendAsync: the commit awaited on the event loop on PostgreSQL; written before
  // it returns on SQLite. Either way appends to one session apply in the order they were asked.
  it("appendAsync applies one session's appends in order, and on PostgreSQL leaves the thread free while it commits", async () => {
    const store = stores.open({ ids: sequentialIds() });
    const message = (content: string) => ({ type: "message" as const, message: { role: "user" as const, content } });
    store.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
    store.createSession({ id: "t", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
    store.append({ sessionId: "s", entries: [message("first: reads the leaf")] });
    const announced: string[] = [];
    store.onDidAppend((event) => announced.push(...event.entryIds));
    const before = engine === "postgres" ? (store.engine as PostgresEngine).traffic.roundTrips : 0;
    const asked = [1, 2, 3, 4, 5].map((n) => store.appendAsync({ sessionId: "s", entries: [message(`async ${n}`)] }));
    // Written already on SQLite; on PostgreSQL the first is sent and the thread goes on meanwhile.
    if (engine === "sqlite") expect(store.getSession("s")!.entryCount).toBe(6);
    const other = store.append({ sessionId: "t", entries: [message("another session, meanwhile")] });
    expect(other.status).toBe("appended");
    const outcomes = await Promise.all(asked);
    if (engine === "postgres") {
      // One round trip each for the five, one for the other session's first append (it reads the leaf: 2 more).
      expect((store.engine as PostgresEngine).traffic.roundTrips - before).toBeLessThanOrEqual(5 + 3);
    }
    const path = store.path("s");
    expect(path.map((stored) => stored.entry.message)).toEqual([
      { role: "user", content: "first: reads the leaf" },
      ...[1, 2, 3, 4, 5].map((n) => ({ role: "user", content: `async ${n}` })),
    ]);
    outcomes.forEach((outcome, index) => {
      if (outcome.status !== "appended") throw new Error(outcome.status);
      expect(outcome.entries[0]!.seq).toBe(path[index + 1]!.seq);
      expect(outcome.leafId).toBe(path[index + 1]!.entry.id);
    });
    expect(announced).toEqual(expect.arrayContaining(path.slice(1).map((stored) => stored.entry.id)));
    // A failure is the promise's, and leaves the order of the rest.
    await expect(store.appendAsync({ sessionId: "nope", entries: [message("x")] })).rejects.toThrow(/nope/);
    expect(store.getSession("s")!.entryCount).toBe(6);
  });

  describe("two daemons on one database", () => {
    const message = (content: string) => ({ type: "message" as const, message: { role: "user" as const, content } });

    it("answer a requestId once, whichever daemon the retry reaches", () => {
      const a = stores.open({ ids: sequentialIds() });
      const b = stores.open({ ids: sequentialIds() });
      a.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
      const request = { id: "req", method: "entry/append" };
      const first = a.append({ sessionId: "s", entries: [message("once")], request });
      const retry = b.append({ sessionId: "s", entries: [message("once")], request });
      expect(retry.status).toBe("replayed");
      if (first.status !== "appended" || retry.status !== "replayed") return;
      expect(retry.entries.map((stored) => stored.entry.id)).toEqual(first.entries.map((stored) => stored.entry.id));
      expect(b.getSession("s")!.entryCount).toBe(1);
    });

    it("commit a leaf move or a conditional append only from the leaf it was planned from", () => {
      const a = stores.open({ ids: sequentialIds() });
      const b = stores.open({ ids: sequentialIds() });
      a.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
      const root = a.append({ sessionId: "s", entries: [message("root")] });
      if (root.status !== "appended") throw new Error(root.status);
      const planned = b.getSession("s")!.leafId; // b plans a navigation and a compaction from here
      const moved = a.append({ sessionId: "s", entries: [message("a moves on")] });
      if (moved.status !== "appended") throw new Error(moved.status);
      expect(b.moveLeafIf("s", { from: planned, to: null })).toEqual({ moved: false, leafId: moved.leafId });
      // A branch elsewhere: the entry b planned from is no longer on the current path.
      const elsewhere = a.append({ sessionId: "s", entries: [message("another root")], parentId: null });
      expect(elsewhere.status).toBe("appended");
      const stale = b.append({ sessionId: "s", entries: [message("summary")], onlyIfOnPath: moved.leafId });
      expect(stale.status).toBe("stale");
      expect(a.getSession("s")!.entryCount).toBe(3);
    });

    // On SQLite a job's owner is this test's own process (alive); on PostgreSQL a daemon's lease.
    it.runIf(engine === "postgres")("see the jobs of a daemon that ended as abandoned, and their own as theirs", async () => {
      const a = stores.open({ ids: sequentialIds() });
      const b = stores.open({ ids: sequentialIds() });
      a.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
      const owner = a.jobs.owners.current();
      a.jobs.insert({ id: "j", sessionId: "s", reason: "manual", state: "summarizing", ownerPid: owner.pid, ownerStart: owner.start, nowMs: 1 });
      const job = b.jobs.get("j")!;
      const asOwner = { pid: job.ownerPid, start: job.ownerStart };
      expect(a.jobs.owners.isSelf(asOwner)).toBe(true);
      expect(b.jobs.owners.isSelf(asOwner)).toBe(false);
      expect(b.jobs.owners.isAlive(asOwner)).toBe(true);
      await a.close();
      expect(b.jobs.owners.isAlive(asOwner)).toBe(false);
      expect(b.jobs.markInterrupted((running) => !b.jobs.owners.isAlive({ pid: running.ownerPid, start: running.ownerStart }), 2)).toBe(1);
      expect(b.jobs.get("j")!.state).toBe("interrupted");
    });
  });
});
