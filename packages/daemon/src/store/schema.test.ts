import Database from "better-sqlite3";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryFolder } from "../sessions/fixtures/test-helpers.js";
import { openDatabase } from "./database.js";
import { migrate, migrations, SCHEMA_VERSION, schemaVersion } from "./schema.js";
import { SessionStore } from "./session-store.js";

describe("schema migrations", () => {
  let folder: ReturnType<typeof temporaryFolder>;
  beforeEach(() => (folder = temporaryFolder()));
  afterEach(() => folder.cleanup());

  it("creates every table on a fresh database and records the version", () => {
    const db = openDatabase(join(folder.path, "nested", "fresh.db"));
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    // entries_fts and the shadow tables FTS5 keeps its index in.
    expect(tables).toEqual(["compaction_jobs", "entries", "entries_fts", "entries_fts_config", "entries_fts_data", "entries_fts_docsize", "entries_fts_idx", "labels", "request_results", "sessions"]);
    db.close();
  });

  it("runs nothing again when a migrated database is reopened, and keeps its data", async () => {
    const path = join(folder.path, "reopen.db");
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
    const path = join(folder.path, "old.db");
    const raw = new Database(path);
    migrations[0]!.up(raw);
    raw.pragma("user_version = 1");
    raw.close();
    const db = openDatabase(path);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    db.close();
  });

  it("refuses a database written by a newer daemon", () => {
    const path = join(folder.path, "newer.db");
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openDatabase(path)).toThrow(/newer than this daemon/);
  });

  it("opens in WAL mode with NORMAL sync and SQLite's automatic checkpoints off when a worker checkpoints", async () => {
    const path = join(folder.path, "pragmas.db");
    const db = openDatabase(path, { manualCheckpoints: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    expect(db.pragma("busy_timeout", { simple: true })).toBeGreaterThan(0);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    db.close();
  });
});
