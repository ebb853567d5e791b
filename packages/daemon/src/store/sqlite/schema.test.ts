import Database from "better-sqlite3";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "./open-database.js";
import { DatabaseTooNewError } from "../database-too-new.js";
import { migrate, migrations, migrationSearchText, SCHEMA_VERSION, schemaVersion } from "./schema.js";
import { searchText } from "../search-text.js";
import { SessionStore } from "../session-store.js";
import { sequentialIds } from "../../sessions/fixtures/test-helpers.js";
import { tempDirs } from "../../../../../test/support/temp-dir.js";

const dirs = tempDirs();

describe("schema migrations", () => {
  let folder: string;
  beforeEach(() => (folder = dirs.make()));
  afterEach(() => dirs.remove(folder));

  it("creates every table on a fresh database and records the version", () => {
    const db = openDatabase(join(folder, "nested", "fresh.db"));
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    // entries_fts and the shadow tables FTS5 keeps its index in.
    expect(tables).toEqual([
      "compaction_jobs",
      "entries",
      "entries_fts",
      "entries_fts_config",
      "entries_fts_data",
      "entries_fts_docsize",
      "entries_fts_idx",
      "labels",
      "request_results",
      "sessions",
    ]);
    db.close();
  });

  it("runs nothing again when a migrated database is reopened, and keeps its data", async () => {
    const path = join(folder, "reopen.db");
    const first = new SessionStore({ path, checkpoints: "sqlite" });
    first.createSession({ id: "kept", cwd: "/p", createdAt: "2026-01-01T00:00:00.000Z", modifiedMs: 0 });
    await first.close();

    const db = openDatabase(path);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    migrate(db); // a second call is a no-op, not a "table already exists" error
    expect(db.prepare("SELECT id FROM sessions").pluck().all()).toEqual(["kept"]);
    db.close();
  });

  it("applies only the missing steps to a database at an older version", () => {
    const path = join(folder, "old.db");
    const raw = new Database(path);
    migrations[0]!.up(raw);
    raw.pragma("user_version = 1");
    raw.close();
    const db = openDatabase(path);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    db.close();
  });

  it("opens a database of the development build that numbered the full-text step 4: index rebuilt once, owner columns added", async () => {
    const path = join(folder, "dev.db");
    const store = new SessionStore({ path, ids: sequentialIds(), checkpoints: "sqlite" });
    store.createSession({ id: "dev", cwd: "/p", createdAt: "2026-01-01T00:00:00.000Z", modifiedMs: 0 });
    store.append({ sessionId: "dev", entries: [{ type: "message", message: { role: "user", content: "colour themes for the editor" } }] });
    await store.close();
    // That build's layout: the full-text index (filled) and its trigger, no owner columns, version 4.
    const raw = new Database(path);
    raw.exec(
      "ALTER TABLE sessions DROP COLUMN import_owner_pid; ALTER TABLE sessions DROP COLUMN import_owner_start; ALTER TABLE compaction_jobs DROP COLUMN owner_start",
    );
    raw.pragma("user_version = 4");
    raw.close();

    const db = openDatabase(path);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    const columns = (table: string) => (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((column) => column.name);
    expect(columns("sessions")).toEqual(expect.arrayContaining(["import_owner_pid", "import_owner_start"]));
    expect(columns("compaction_jobs")).toContain("owner_start");
    expect(db.prepare("SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'themes'").pluck().get()).toBe(1);
    db.close();
  });

  it("adds no owner column twice when a database at version 3 has them already", () => {
    const path = join(folder, "columns.db");
    const raw = new Database(path);
    for (const migration of migrations.slice(0, 3)) migration.up(raw);
    raw.exec("ALTER TABLE sessions ADD COLUMN import_owner_pid INTEGER");
    raw.pragma("user_version = 3");
    raw.close();
    const db = openDatabase(path);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    db.close();
  });

  it("the step's frozen text extraction agrees with the live search's today", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const entries = [
      {
        type: "message",
        id: "a",
        parentId: null,
        timestamp: at,
        message: { role: "user", content: [{ type: "text", text: "alpha" }, { type: "image" }, { type: "text", text: " beta " }] },
      },
      { type: "message", id: "b", parentId: "a", timestamp: at, message: { role: "bashExecution", command: "npm test", output: "gamma" } },
      {
        type: "message",
        id: "c",
        parentId: "b",
        timestamp: at,
        message: { role: "toolResult", content: [{ type: "text", text: "file" }] },
      },
      { type: "custom_message", id: "d", parentId: "c", timestamp: at, customType: "x", content: "  ", display: true },
      { type: "session_info", id: "e", parentId: "d", timestamp: at, name: "delta" },
      { type: "compaction", id: "f", parentId: "e", timestamp: at, summary: "x".repeat(40_000), firstKeptEntryId: "a", tokensBefore: 1 },
      { type: "label", id: "g", parentId: "f", timestamp: at, targetId: "a", label: "l" },
    ];
    for (const entry of entries) expect(migrationSearchText(entry)).toBe(searchText(entry as never));
  });

  it("refuses a database written by a newer daemon", () => {
    const path = join(folder, "newer.db");
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openDatabase(path)).toThrow(DatabaseTooNewError);
    expect(() => openDatabase(path)).toThrow(/newer than this daemon/);
  });

  it("opens in WAL mode with NORMAL sync and SQLite's automatic checkpoints off when a worker checkpoints", async () => {
    const path = join(folder, "pragmas.db");
    const db = openDatabase(path, { manualCheckpoints: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    expect(db.pragma("busy_timeout", { simple: true })).toBeGreaterThan(0);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    db.close();
  });
});
