import Database from "better-sqlite3";
import type { EntryInput, SessionEntry } from "@base-context/protocol";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sequentialIds } from "../../sessions/fixtures/test-helpers.js";
import { postgresHarness, sqliteHarness, type SearchHarness } from "../fixtures/search-harness.js";
import { tsQuery } from "../postgres/search.js";
import { usePostgresDatabases } from "../postgres/test-support.js";
import { migrations } from "./schema.js";
import { ftsQuery } from "./search.js";
import { SessionStore } from "../session-store.js";
import { tempDirs } from "../../../../../test/support/temp-dir.js";

const dirs = tempDirs();
const postgres = usePostgresDatabases();

const user = (text: string): EntryInput => ({ type: "message", message: { role: "user", content: text } });
const assistant = (text: string): EntryInput => ({
  type: "message",
  message: { role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m" },
});
const toolResult = (text: string): EntryInput =>
  ({
    type: "message",
    message: { role: "toolResult", toolCallId: "c", toolName: "read", content: [{ type: "text", text }], isError: false },
  }) as EntryInput;

/** The same cases on each engine: what a search finds, in which order, with which hits. */
const engines: { name: string; open: () => Promise<SearchHarness> }[] = [
  {
    name: "SQLite",
    open: async () => {
      const folder = dirs.make();
      const harness = sqliteHarness(join(folder, "search.db"));
      const close = async () => {
        await harness.close();
        dirs.remove(folder);
      };
      return { ...harness, close };
    },
  },
  { name: "PostgreSQL", open: async () => postgresHarness((await postgres.open()).db) },
];

describe.each(engines)("full-text search on $name", (engine) => {
  let store: SearchHarness;
  const found = (text: string, options: { cwd?: string } = {}) =>
    store
      .search({ text, limit: 10, hitsPerSession: 3, ...options })
      .map((match) => [match.sessionId, match.hits.map((hit) => hit.entryId)]);

  beforeEach(async () => {
    store = await engine.open();
  });
  afterEach(async () => {
    await store.close();
  });

  it("finds any message of a session, not only the first, by stem and prefix; ranks the better match first", () => {
    store.create("themes");
    store.append(
      "themes",
      user("/mode"),
      assistant("ok"),
      user("Let us talk about colour themes for the editor"),
      assistant("Dark themes, light themes, theme switching."),
    );
    store.create("other");
    store.append("other", user("One theme only, at the very end of a long message about many other things entirely"));
    const [first, second] = found("theme");
    expect(first![0]).toBe("themes");
    expect(second![0]).toBe("other");
    expect(found("THEMING colour")).toEqual([["themes", [expect.any(String)]]]);
    expect(found("editor themes")[0]![1]).toHaveLength(1);
    expect(found("nothing-like-this")).toEqual([]);
    // A word inside punctuation is a word ("/mode"), and the best hit of a session comes first.
    expect(found("mode")).toEqual([["themes", [expect.any(String)]]]);
    const [best] = store.search({ text: "themes", limit: 10, hitsPerSession: 3 });
    expect(best!.hitCount).toBe(2);
    expect(best!.hits.map((hit) => hit.score)).toEqual([...best!.hits.map((hit) => hit.score)].sort((a, b) => a - b));
    expect(best!.score).toBe(best!.hits[0]!.score);
  });

  it("indexes summaries and names, not tool results; the name matches first; cwd narrows", () => {
    store.create("a", "/one");
    store.append("a", user("read it"), toolResult("secret-word inside a file"), {
      type: "compaction",
      summary: "## Goal\nMigrate the billing tables",
      firstKeptEntryId: "e0000001",
      tokensBefore: 10,
    } as EntryInput);
    store.create("b", "/two");
    store.append("b", { type: "session_info", name: "Billing cleanup" }, user("hello"));
    expect(found("secret-word")).toEqual([]);
    expect(found("billing").map(([id]) => id)).toEqual(["b", "a"]);
    const [byName] = store.search({ text: "billing", limit: 10, hitsPerSession: 3 });
    expect(byName).toMatchObject({ sessionId: "b", nameMatches: true, score: Number.NEGATIVE_INFINITY });
    expect(found("billing", { cwd: "/one" }).map(([id]) => id)).toEqual(["a"]);
  });

  it("keeps the index current on import and fork, and drops a deleted session's rows", () => {
    const entry = {
      type: "message",
      id: "x1",
      parentId: null,
      timestamp: "2026-03-01T12:00:00.000Z",
      message: { role: "user", content: "kubernetes rollout" },
    } as SessionEntry;
    const target = store.beginImport("imp", [entry]);
    expect(found("kubernetes")).toEqual([]); // invisible until the import finishes
    target.finish();
    expect(found("kubernetes")).toEqual([["imp", ["x1"]]]);
    store.fork("imp", "x1", "forked");
    expect(found("kubernetes").map(([id]) => id).sort()).toEqual(["forked", "imp"]);
    store.deleteSession("imp");
    expect(found("kubernetes").map(([id]) => id)).toEqual(["forked"]);
  });

  it("takes what people type as words, never as query syntax", () => {
    store.create("q");
    store.append("q", user('say "NEAR(a b)" AND -x & !y | z:* <-> w'));
    expect(found('"NEAR(a b)" AND')).toHaveLength(1);
    expect(found("& ! | :* <->")).toEqual([]);
    expect(found("z:* <-> !y")).toHaveLength(1);
    expect(found("...")).toEqual([]);
  });

  it("finds words with diacritics and in other scripts, and limits the sessions and the hits", () => {
    for (const id of ["s1", "s2", "s3"]) {
      store.create(id);
      store.append(id, user("Café crème for the naïve"), user("café again"), user("日本語 の テスト"));
    }
    expect(found("cafe").map(([id]) => id).sort()).toEqual(["s1", "s2", "s3"]);
    expect(found("naive creme")).toHaveLength(3);
    expect(found("日本語")).toHaveLength(3);
    store.create("long");
    store.append("long", user(`pasted ${"ab".repeat(1500)} end`));
    expect(found("ab".repeat(300)).map(([id]) => id)).toEqual(["long"]);
    expect(found(`${"ab".repeat(1500)} end`).map(([id]) => id)).toEqual(["long"]);
    const limited = store.search({ text: "café", limit: 2, hitsPerSession: 1 });
    expect(limited).toHaveLength(2);
    expect(limited.map((match) => [match.hitCount, match.hits.length])).toEqual([
      [2, 1],
      [2, 1],
    ]);
  });
});

describe("full-text search on SQLite", () => {
  let folder: string;
  let store: SessionStore;
  const found = (text: string) =>
    store.searchSessions({ text, limit: 10, hitsPerSession: 3 }).map((match) => [match.sessionId, match.hits.map((hit) => hit.entryId)]);

  beforeEach(() => {
    folder = dirs.make();
    store = new SessionStore({ path: join(folder, "search.db"), ids: sequentialIds(), checkpoints: "sqlite" });
  });
  afterEach(async () => {
    await store.close();
    dirs.remove(folder);
  });

  it("quotes every word as an FTS5 prefix phrase", () => {
    expect(ftsQuery('theme" OR x*')).toBe('"theme"""* "OR"* "x*"*');
    expect(ftsQuery("  ... ")).toBeUndefined();
  });

  it("the migration indexes the entries of an existing database", async () => {
    await store.close();
    const raw = new Database(join(folder, "old.db"));
    for (const migration of migrations.slice(0, 3)) migration.up(raw);
    raw.pragma("user_version = 3");
    raw.prepare("INSERT INTO sessions (id, cwd, created_at, modified_ms) VALUES ('old', '/p', '2026-01-01T00:00:00.000Z', 0)").run();
    raw
      .prepare(
        "INSERT INTO entries (session_id, id, parent_id, type, role, depth, json) VALUES ('old', 'o1', NULL, 'message', 'user', 0, ?)",
      )
      .run(
        JSON.stringify({
          type: "message",
          id: "o1",
          parentId: null,
          timestamp: "2026-01-01T00:00:00.000Z",
          message: { role: "user", content: "legacy search words" },
        }),
      );
    raw.close();
    store = new SessionStore({ path: join(folder, "old.db"), checkpoints: "sqlite" });
    expect(found("legacy")).toEqual([["old", ["o1"]]]);
  });
});

describe("full-text search on PostgreSQL", () => {
  it("makes each typed word a prefix phrase of its letters and digits, joined by AND", () => {
    expect(tsQuery('theme" OR x*')).toBe("theme:* & or:* & x:*");
    expect(tsQuery("NEAR(a b) secret-word Café")).toBe("near <-> a:* & b:* & secret <-> word:* & cafe:*");
    expect(tsQuery("  ... & | !")).toBeUndefined();
  });
});
