import type { EntryInput } from "@base-context/protocol";
import { beforeEach, describe, expect, it } from "vitest";
import type { SessionStore } from "../store/index.js";
import { ENGINES, useTestStores } from "../store/test-support.js";
import { ContextPathCache } from "./context-path-cache.js";
import { sequentialIds } from "./fixtures/test-helpers.js";

const user = (text: string): EntryInput => ({ type: "message", message: { role: "user", content: text } });
const assistant = (text: string): EntryInput => ({
  type: "message",
  message: { role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m" },
});

describe.each(ENGINES)("ContextPathCache with SessionStore.contextPath on %s", (engine) => {
  const stores = useTestStores(engine);
  let store: SessionStore;
  let cache: ContextPathCache;

  const append = (entry: EntryInput, parentId?: string | null, sessionId = "s") => {
    const outcome = store.append({ sessionId, entries: [entry], parentId, tokens: [7] });
    if (outcome.status !== "appended") throw new Error(outcome.status);
    return outcome.entries[0]!.entry;
  };
  /** A read through the cache, as SessionService does it. */
  const read = (leafId?: string | null, sessionId = "s") => {
    const rows = store.contextPath(sessionId, leafId, cache.get(sessionId));
    cache.remember(sessionId, rows);
    return rows;
  };
  const ids = (rows: { entries: { entry: { id: string } }[] }) => rows.entries.map((stored) => stored.entry.id);
  /** The same path read without anything known: what a reuse must equal. */
  const fresh = (leafId?: string | null, sessionId = "s") => {
    const { reused: _reused, ...rows } = store.contextPath(sessionId, leafId);
    return rows;
  };
  const withoutReuse = (rows: ReturnType<typeof read>) => {
    const { reused: _reused, ...rest } = rows;
    return rest;
  };

  beforeEach(() => {
    store = stores.open({ ids: sequentialIds() });
    store.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
    cache = new ContextPathCache();
  });

  it("reads only the rows after the known leaf, and nothing for the same leaf or an ancestor", () => {
    append({ type: "model_change", provider: "openai", modelId: "gpt-5" });
    const first = append(user("one"));
    const second = append(assistant("two"));
    expect(read().reused).toBeUndefined();

    const same = read();
    expect(same.reused).toBe(3);
    expect(withoutReuse(same)).toEqual(fresh());

    const third = append(user("three"));
    append(assistant("four"));
    const extended = read();
    expect(extended.reused).toBe(3);
    expect(ids(extended).slice(1)).toEqual([first.id, second.id, third.id, extended.leafId]);
    expect(withoutReuse(extended)).toEqual(fresh());

    const parent = read(second.id);
    expect(parent.reused).toBe(3);
    expect(withoutReuse(parent)).toEqual(fresh(second.id));
  });

  it("reads the whole path when the known one parted ways, or a compaction moved the start", () => {
    const a = append(user("a"));
    const b = append(assistant("b"));
    read();
    const sibling = append(assistant("b'"), a.id);
    const branched = read(sibling.id);
    expect(branched.reused).toBeUndefined();
    expect(ids(branched)).toEqual([a.id, sibling.id]);

    read(b.id);
    const c = append(user("c"), b.id);
    append({ type: "compaction", summary: "S", firstKeptEntryId: c.id, tokensBefore: 10 });
    const compacted = read();
    expect(compacted.reused).toBeUndefined();
    expect(ids(compacted)[0]).toBe(c.id);
    expect(compacted.compaction?.entry.type).toBe("compaction");
    expect(withoutReuse(compacted)).toEqual(fresh());
  });

  it("knows nothing of a session deleted and created again under the same id", () => {
    append({ ...user("first life"), id: "a0000001" });
    read();
    store.deleteSession("s");
    store.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-02T12:00:00.000Z", modifiedMs: 0 });
    // The same entry id at the same depth (as when a different file is imported under a reused id).
    append({ ...user("second life"), id: "a0000001" });
    const rows = read();
    expect(rows.reused).toBeUndefined();
    expect(rows.entries.map((stored) => (stored.entry as { message: { content: string } }).message.content)).toEqual(["second life"]);
  });

  it("does not keep a path with an entry still uncounted", () => {
    store.append({ sessionId: "s", entries: [user("no count yet")] });
    read();
    expect(cache.get("s")).toBeUndefined();
  });

  it("keeps a few sessions within a size budget, least recently used out first", () => {
    const small = new ContextPathCache({ sessions: 2, maxPathChars: 1000, maxTotalChars: 700 });
    for (const id of ["s1", "s2", "s3"]) {
      store.createSession({ id, cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
      append(user(`hello ${id}`), undefined, id);
    }
    const remember = (sessionId: string) => small.remember(sessionId, store.contextPath(sessionId));
    // Which are kept, looked up in the order they were first remembered (a lookup makes its session
    // the most recently used: in this order it keeps their order as it was).
    const kept = () => ["s1", "s2", "s3"].filter((id) => small.get(id) !== undefined);
    remember("s1");
    remember("s2");
    small.get("s1");
    remember("s3");
    expect(kept()).toEqual(["s1", "s3"]);

    append(user("x".repeat(1000)), undefined, "s2");
    remember("s2");
    expect(kept()).toEqual(["s1", "s3"]); // over maxPathChars: not kept

    append(user("y".repeat(250)), undefined, "s1");
    remember("s1");
    remember("s3");
    append(user("z".repeat(250)), undefined, "s3");
    remember("s3");
    expect(kept()).toEqual(["s3"]); // both together pass maxTotalChars
  });

  it("never reuses rows of a session another daemon deleted and wrote again with the same ids", () => {
    const a = append(user("a"));
    const b = append(assistant("b"));
    expect(read().reused).toBeUndefined();
    expect(read().reused).toBe(2);

    // Another daemon on the same database: the same session id, creation time and entry ids, other content.
    const other = stores.open({ ids: sequentialIds() });
    other.deleteSession("s");
    other.createSession({ id: "t", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
    other.append({ sessionId: "t", entries: [user("elsewhere")], tokens: [3] });
    other.createSession({ id: "s", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
    other.append({ sessionId: "s", entries: [{ ...user("A"), id: a.id }, { ...assistant("B"), id: b.id }], tokens: [1, 1] });
    other.append({ sessionId: "s", entries: [{ ...user("C"), id: "c0ffee00" }], parentId: a.id, tokens: [1] });
    other.setLeaf("s", b.id);
    const again = read();
    expect(again.reused).toBeUndefined();
    expect(withoutReuse(again)).toEqual(fresh());
    expect(again.entries.map((stored) => stored.tokens)).toEqual([1, 1]);
    // An ancestor of the known leaf (no row read below it) is checked the same way.
    cache.forget("s");
    expect(read().reused).toBeUndefined();
  });
});
