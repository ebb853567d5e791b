import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../sqlite/open-database.js";
import { DatabaseTooNewError } from "../database-too-new.js";
import {
  migratePostgres,
  POSTGRES_SCHEMA_VERSION,
  PostgresTooNewError,
  postgresMigrations,
  postgresSchemaVersion,
  SESSION_LOCK_SPACE,
  STALE_LEAF_SQLSTATE,
} from "./schema.js";
import { usePostgresDatabases } from "./test-support.js";
import { tempDirs } from "../../../../../test/support/temp-dir.js";

const dirs = tempDirs();
const postgres = usePostgresDatabases();
const migrateProcess = fileURLToPath(new URL("../fixtures/pg-migrate-process.mjs", import.meta.url));

/** The tables SQLite's schema and this one share, whose columns the store's portable SQL names. */
const SHARED_TABLES = ["compaction_jobs", "entries", "labels", "request_results", "sessions"];

/** Resolves when the child printed `line` on stdout. */
function waitForLine(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.split("\n").includes(line)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`migrate process exited with ${code} before "${line}"`)));
  });
}

describe("PostgreSQL schema migrations", () => {
  let folder: string;
  beforeEach(() => (folder = dirs.make()));
  afterEach(() => dirs.remove(folder));

  it("creates every table on a fresh database and records the version", async () => {
    const { db } = await postgres.open({ migrated: false });
    expect(postgresSchemaVersion(db)).toBe(0);
    migratePostgres(db);
    expect(postgresSchemaVersion(db)).toBe(POSTGRES_SCHEMA_VERSION);
    const tables = db
      .query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")
      .rows.map((row) => row.name);
    expect(tables).toEqual([
      "compaction_jobs",
      "daemons",
      "entries",
      "entries_fts",
      "labels",
      "request_results",
      "schema_version",
      "sessions",
    ]);
  });

  it("compresses entries' JSON with lz4 where the server has it, and leaves the default where it has not", async () => {
    const { db } = await postgres.open();
    let hasLz4 = true;
    db.begin("write");
    try {
      db.query("CREATE TEMP TABLE probe (t TEXT COMPRESSION lz4)");
    } catch {
      hasLz4 = false;
    } finally {
      db.rollback();
    }
    const method = db.query<{ method: string }>(
      "SELECT attcompression::text AS method FROM pg_attribute WHERE attrelid = 'entries'::regclass AND attname = 'json'",
    ).rows[0]!.method;
    expect(method).toBe(hasLz4 ? "l" : "");
  });

  it("bc_write_entries writes the search rows of the entries it inserts, and of those an earlier call of the transaction inserted", async () => {
    const { db } = await postgres.open();
    db.query("INSERT INTO sessions (id, cwd, created_at, modified_ms) VALUES ('s', '/p', '2026-01-01T00:00:00Z', 0)");
    const write = (ids: string[], texts: { id: string; text: string }[], tally?: { leaf: string; added: number }) =>
      db.query<{ id: string; seq: string }>(
        `SELECT id, seq FROM bc_write_entries(NULL, NULL, NULL, NULL,
           $1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[], $6::INTEGER[], $7::TEXT[], $8::INTEGER[], $9::TEXT[],
           $10::TEXT[], $11::TEXT[], $12::INTEGER[], $13::TEXT[], $14::TEXT[], $15::TEXT[], $16::TEXT[],
           $17, $18, $19, $20, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
        [
          ids.map(() => "s"),
          ids,
          ids.map(() => null),
          ids.map(() => "message"),
          ids.map(() => "user"),
          ids.map((_, index) => index),
          ...[0, 1, 2, 3, 4].map(() => ids.map(() => null)),
          ids.map(() => 1),
          ids.map((id) => JSON.stringify({ type: "message", id })),
          texts.map(() => "s"),
          texts.map((text) => text.id),
          texts.map((text) => text.text),
          tally ? "s" : null,
          tally?.leaf ?? null,
          tally?.added ?? null,
          tally ? 5 : null,
        ],
      ).rows;
    db.begin("write");
    const first = write(["a", "b"], [{ id: "a", text: "alpha apples" }]);
    // A search row for "b" (sent by the first call) rides with the entry "c" of the second, and its own.
    const second = write(["c"], [{ id: "b", text: "bravo bananas" }, { id: "c", text: "charlie cherries" }, { id: "gone", text: "never stored" }], {
      leaf: "c",
      added: 3,
    });
    db.commit();
    expect(first.map((row) => row.id)).toEqual(["a", "b"]);
    expect(second.map((row) => row.id)).toEqual(["c"]);
    const seqs = new Map([...first, ...second].map((row) => [row.id, Number(row.seq)]));
    expect([...seqs.values()].every((seq) => Number.isInteger(seq) && seq > 0)).toBe(true);
    const indexed = db.query<{ seq: string; words: string }>("SELECT seq, vector::text AS words FROM entries_fts ORDER BY seq").rows;
    expect(indexed.map((row) => Number(row.seq))).toEqual([seqs.get("a"), seqs.get("b"), seqs.get("c")]);
    expect(indexed.map((row) => row.words)).toEqual([
      expect.stringContaining("alpha"),
      expect.stringContaining("bravo"),
      expect.stringContaining("cherri"),
    ]);
    expect(db.query("SELECT leaf_id, entry_count FROM sessions WHERE id = 's'").rows).toEqual([{ leaf_id: "c", entry_count: 3 }]);
  });

  it("bc_write_entries given a session takes its write lock before it reads or writes anything", async () => {
    const { db, url } = await postgres.open();
    db.query("INSERT INTO sessions (id, cwd, created_at, modified_ms, leaf_id) VALUES ('s', '/p', '2026-01-01T00:00:00Z', 0, 'root')");
    const rootSeq = db.query<{ seq: number }>("INSERT INTO entries (session_id, id, type, depth, json) VALUES ('s', 'root', 'message', 0, '{}') RETURNING seq")
      .rows[0]!.seq;
    const holder = postgres.connect(url);
    holder.begin("write");
    holder.query("SELECT pg_advisory_xact_lock($1, hashtext('s'))", [SESSION_LOCK_SPACE]);
    // An append expecting the leaf 'root', as one statement of its own: this thread is free while it waits.
    db.begin("write");
    const written = db.send(
      `SELECT id, seq FROM bc_write_entries('s', 's', 'root', $1,
         ARRAY['s'], ARRAY['a'], ARRAY['root'], ARRAY['message'], ARRAY['user'], ARRAY[1], ARRAY[NULL], ARRAY[NULL]::INTEGER[],
         ARRAY[NULL], ARRAY[NULL], ARRAY[NULL], ARRAY[1], ARRAY['{"type":"message","id":"a"}'],
         ARRAY['s'], ARRAY['a'], ARRAY['alpha'], 's', 'a', 1, 5, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
      [rootSeq],
      undefined,
      true,
    );
    const committed = db.commitAsync();
    const waiting = () => holder.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").rows[0]!.n;
    const deadline = Date.now() + 10_000;
    while (waiting() === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(waiting()).toBe(1);
    // Meanwhile the holder moves the leaf: the append, checked once it has the lock, sees that.
    holder.query("INSERT INTO entries (session_id, id, parent_id, type, depth, json) VALUES ('s', 'other', 'root', 'message', 1, '{}')");
    holder.query("UPDATE sessions SET leaf_id = 'other' WHERE id = 's'");
    holder.commit();
    await expect(committed).rejects.toMatchObject({ code: STALE_LEAF_SQLSTATE });
    expect(() => written.rows).toThrow(/ended before its result was read/);
    expect(db.query("SELECT id FROM entries ORDER BY seq").rows).toEqual([{ id: "root" }, { id: "other" }]);
    expect(db.query("SELECT count(*)::int AS n FROM entries_fts").rows).toEqual([{ n: 0 }]);
  });

  it("bc_write_entries stores a request's result with the entries, and writes nothing when that requestId is taken", async () => {
    const { db } = await postgres.open();
    db.query("INSERT INTO sessions (id, cwd, created_at, modified_ms) VALUES ('s', '/p', '2026-01-01T00:00:00Z', 0)");
    const write = (id: string, requestId: string) =>
      db.query<{ id: string }>(
        `SELECT id FROM bc_write_entries(NULL, NULL, NULL, NULL,
           ARRAY['s'], ARRAY[$1], ARRAY[NULL], ARRAY['message'], ARRAY['user'], ARRAY[0], ARRAY[NULL], ARRAY[NULL]::INTEGER[],
           ARRAY[NULL], ARRAY[NULL], ARRAY[NULL], ARRAY[1], ARRAY['{}'], ARRAY[]::TEXT[], ARRAY[]::TEXT[], ARRAY[]::TEXT[],
           's', $1, 1, 5, NULL, NULL, 's', $2, 'entry/append', $3, 7)`,
        [id, requestId, JSON.stringify({ entryIds: [id] })],
      ).rows;
    expect(write("a", "r1")).toEqual([{ id: "a" }]);
    expect(db.query("SELECT session_id, request_id, method, result, created_ms FROM request_results").rows).toEqual([
      { session_id: "s", request_id: "r1", method: "entry/append", result: '{"entryIds":["a"]}', created_ms: 7 },
    ]);
    expect(() => write("b", "r1")).toThrow(expect.objectContaining({ code: "23505" }));
    expect(db.query("SELECT id FROM entries ORDER BY seq").rows).toEqual([{ id: "a" }]);
    expect(db.query("SELECT leaf_id, entry_count FROM sessions").rows).toEqual([{ leaf_id: "a", entry_count: 1 }]);
  });

  it("names every column of the shared tables as SQLite's final schema does, in the same order", async () => {
    const sqlite = openDatabase(join(folder, "reference.db"));
    const { db } = await postgres.open();
    for (const table of SHARED_TABLES) {
      const expected = (sqlite.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((column) => column.name);
      const actual = db
        .query<{ name: string }>(
          "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
          [table],
        )
        .rows.map((row) => row.name);
      expect(actual, table).toEqual(expected);
    }
    sqlite.close();
  });

  it("keeps JSON as the exact text, numbers ms-wide, seq an identity, and cascades a session's deletion", async () => {
    const { db } = await postgres.open();
    const json = '{"z":1,  "a":"é"}';
    const later = Date.parse("2200-01-01T00:00:00.000Z"); // beyond 32 bits
    db.query("INSERT INTO sessions (id, cwd, created_at, modified_ms, header_extra) VALUES ('s', '/p', 'x', $1, $2)", [later, json]);
    const seqs = ["e1", "e2"].map(
      (id) =>
        db.query<{ seq: number }>("INSERT INTO entries (session_id, id, type, depth, json) VALUES ('s', $1, 'message', 0, $2) RETURNING seq", [
          id,
          json,
        ]).rows[0]!.seq,
    );
    expect(seqs[1]! - seqs[0]!).toBe(1);
    db.query("INSERT INTO labels VALUES ('s', 'e1', 'l', 'e2')");
    db.query("INSERT INTO request_results VALUES ('s', 'r', 'm', '{}', $1)", [later]);
    db.query(
      "INSERT INTO compaction_jobs (id, session_id, reason, state, owner_pid, created_ms, updated_ms) VALUES ('j', 's', 'manual', 'prepared', 1, $1, $1)",
      [later],
    );
    const session = db.query<{ modified_ms: number; header_extra: string }>("SELECT modified_ms, header_extra FROM sessions").rows[0]!;
    expect(session).toEqual({ modified_ms: later, header_extra: json });
    expect(db.query<{ json: string }>("SELECT json FROM entries WHERE id = 'e1'").rows[0]!.json).toBe(json);
    db.query("DELETE FROM sessions WHERE id = 's'");
    for (const table of ["entries", "labels", "request_results", "compaction_jobs"]) {
      expect(db.query(`SELECT 1 FROM ${table}`).rowCount, table).toBe(0);
    }
  });

  it("indexes only entries without a token count in entries_uncounted", async () => {
    const { db } = await postgres.open();
    const definition = db.query<{ def: string }>("SELECT indexdef AS def FROM pg_indexes WHERE indexname = 'entries_uncounted'").rows[0]!.def;
    expect(definition).toMatch(/\(session_id, seq\) WHERE \(tokens IS NULL\)/);
  });

  it("runs nothing again on a migrated database, and keeps its data", async () => {
    const { db } = await postgres.open();
    db.query("INSERT INTO sessions (id, cwd, created_at, modified_ms) VALUES ('kept', '/p', 'x', 0)");
    migratePostgres(db); // a no-op, not a "relation already exists" error
    expect(db.query<{ id: string }>("SELECT id FROM sessions").rows).toEqual([{ id: "kept" }]);
    expect(db.query("SELECT * FROM schema_version").rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
  });

  it("applies only the missing steps to a database at an older version", async () => {
    const { db } = await postgres.open({ migrated: false });
    db.exec(postgresMigrations[0]!.script);
    db.exec("CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1)");
    db.query("INSERT INTO sessions (id, cwd, created_at, modified_ms) VALUES ('old', '/p', 'x', 0)");
    migratePostgres(db);
    expect(postgresSchemaVersion(db)).toBe(POSTGRES_SCHEMA_VERSION);
    expect(db.query("SELECT id FROM sessions").rows).toEqual([{ id: "old" }]);
    expect(db.query("SELECT 1 FROM daemons").rowCount).toBe(0);
  });

  it("refuses a database migrated by a newer daemon with the too-new error, and changes nothing", async () => {
    const { db } = await postgres.open();
    db.query("UPDATE schema_version SET version = $1", [POSTGRES_SCHEMA_VERSION + 1]);
    let thrown: unknown;
    try {
      migratePostgres(db);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PostgresTooNewError);
    expect(thrown).toBeInstanceOf(DatabaseTooNewError);
    expect((thrown as DatabaseTooNewError).schemaVersion).toBe(POSTGRES_SCHEMA_VERSION + 1);
    expect((thrown as Error).message).toContain(`(${POSTGRES_SCHEMA_VERSION})`);
    expect(postgresSchemaVersion(db)).toBe(POSTGRES_SCHEMA_VERSION + 1);
  });

  it("lets several daemons meet a fresh database at once: each step runs once, every daemon succeeds", async () => {
    const { url } = await postgres.open({ migrated: false });
    const children = [1, 2, 3, 4].map(() => spawn(process.execPath, [migrateProcess, url], { stdio: ["pipe", "pipe", "inherit"] }));
    try {
      await Promise.all(children.map((child) => waitForLine(child, "ready")));
      const exits = children.map((child) => once(child, "exit"));
      for (const child of children) child.stdin!.write("go\n");
      const codes = (await Promise.all(exits)).map(([code]) => code);
      expect(codes).toEqual([0, 0, 0, 0]);
    } finally {
      for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    }
    const db = postgres.connect(url);
    expect(db.query("SELECT * FROM schema_version").rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
    expect(db.query("SELECT 1 FROM pg_ts_config WHERE cfgname = 'base_context_search'").rowCount).toBe(1);
  });
});
