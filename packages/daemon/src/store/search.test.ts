import Database from "better-sqlite3";
import type { EntryInput } from "@base-context/protocol";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sequentialIds } from "../sessions/fixtures/test-helpers.js";
import { migrations } from "./schema.js";
import { ftsQuery } from "./search.js";
import { SessionStore } from "./session-store.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();

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

describe("full-text search", () => {
  let folder: string;
  let store: SessionStore;
  const path = () => join(folder, "search.db");
  const create = (id: string, cwd = "/p") => store.createSession({ id, cwd, createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
  const append = (sessionId: string, ...entries: EntryInput[]) => store.append({ sessionId, entries });
  const found = (text: string, options: { cwd?: string } = {}) =>
    store
      .searchSessions({ text, limit: 10, hitsPerSession: 3, ...options })
      .map((match) => [match.sessionId, match.hits.map((hit) => hit.entryId)]);

  beforeEach(() => {
    folder = dirs.make();
    store = new SessionStore({ path: path(), ids: sequentialIds(), checkpoints: "sqlite" });
  });
  afterEach(async () => {
    await store.close();
    dirs.remove(folder);
  });

  it("finds any message of a session, not only the first, by stem and prefix; ranks the better match first", () => {
    create("themes");
    append(
      "themes",
      user("/mode"),
      assistant("ok"),
      user("Let us talk about colour themes for the editor"),
      assistant("Dark themes, light themes, theme switching."),
    );
    create("other");
    append("other", user("One theme only, at the very end of a long message about many other things entirely"));
    const [first, second] = found("theme");
    expect(first![0]).toBe("themes");
    expect(second![0]).toBe("other");
    expect(found("THEMING colour")).toEqual([["themes", [expect.any(String)]]]);
    expect(found("editor themes")[0]![1]).toHaveLength(1);
    expect(found("nothing-like-this")).toEqual([]);
  });

  it("indexes summaries and names, not tool results; the name matches first; cwd narrows", () => {
    create("a", "/one");
    append("a", user("read it"), toolResult("secret-word inside a file"), {
      type: "compaction",
      summary: "## Goal\nMigrate the billing tables",
      firstKeptEntryId: "e0000001",
      tokensBefore: 10,
    } as EntryInput);
    create("b", "/two");
    append("b", { type: "session_info", name: "Billing cleanup" }, user("hello"));
    expect(found("secret-word")).toEqual([]);
    expect(found("billing").map(([id]) => id)).toEqual(["b", "a"]);
    expect(found("billing", { cwd: "/one" }).map(([id]) => id)).toEqual(["a"]);
  });

  it("keeps the index current on import and fork, and drops a deleted session's rows", () => {
    const target = store.beginImport({ id: "imp", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 0 });
    target.insertBatch([
      {
        line: 2,
        entry: {
          type: "message",
          id: "x1",
          parentId: null,
          timestamp: "2026-03-01T12:00:00.000Z",
          message: { role: "user", content: "kubernetes rollout" },
        } as never,
        tokens: null,
      },
    ]);
    expect(found("kubernetes")).toEqual([]); // invisible until the import finishes
    target.finish();
    expect(found("kubernetes")).toEqual([["imp", ["x1"]]]);
    store.fork("imp", "x1", { id: "forked", cwd: "/p", createdAt: "2026-03-01T12:00:00.000Z", modifiedMs: 1 });
    expect(found("kubernetes").map(([id]) => id).sort()).toEqual(["forked", "imp"]);
    store.deleteSession("imp");
    expect(found("kubernetes").map(([id]) => id)).toEqual(["forked"]);
  });

  it("takes what people type as words, never as FTS syntax", () => {
    expect(ftsQuery('theme" OR x*')).toBe('"theme"""* "OR"* "x*"*');
    expect(ftsQuery("  ... ")).toBeUndefined();
    create("q");
    append("q", user('say "NEAR(a b)" AND -x'));
    expect(found('"NEAR(a b)" AND')).toHaveLength(1);
    expect(found("...")).toEqual([]);
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
