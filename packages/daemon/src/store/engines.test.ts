import { describe, expect, it } from "vitest";
import { sequentialIds } from "../sessions/fixtures/test-helpers.js";
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
});
