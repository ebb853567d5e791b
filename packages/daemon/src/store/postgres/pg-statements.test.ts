/** The store's statements on a real PostgreSQL server (test/support/postgres.ts). */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type PostgresServer, startPostgres } from "../../../../../test/support/postgres.js";
import { PgStatements } from "./pg-statements.js";
import { PostgresError, SyncPostgres } from "./sync-postgres.js";

let server: PostgresServer;
let db: SyncPostgres;
let sql: PgStatements;

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

describe("PgStatements", () => {
  beforeAll(async () => {
    db = SyncPostgres.open(await server.createDatabase());
    db.exec(`CREATE TABLE entries (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      session_id text NOT NULL,
      body text NOT NULL,
      tokens integer
    )`);
    sql = new PgStatements(db);
  });
  afterEach(() => {
    if (db.inTransaction) db.rollback();
    db.exec("TRUNCATE entries RESTART IDENTITY");
  });
  afterAll(async () => {
    await db.close();
  });

  const INSERT = "INSERT INTO entries (session_id, body, tokens) VALUES (?, ?, ?) RETURNING seq";
  const INSERT_NAMED = "INSERT INTO entries (session_id, body, tokens) VALUES (@session, @body, @tokens) RETURNING seq";

  it("runs ? statements: get returns the first row or undefined, all every row, run the changes", () => {
    expect(sql.get<{ seq: number }>(INSERT).get("s1", "one", 3)).toEqual({ seq: 1 });
    expect(sql.get(INSERT).run("s1", "two", null)).toEqual({ changes: 1 });
    const rows = sql.get<{ seq: number; body: string }>('SELECT seq, body AS "bodyText" FROM entries WHERE session_id = ? ORDER BY seq').all("s1");
    expect(rows).toEqual([
      { seq: 1, bodyText: "one" },
      { seq: 2, bodyText: "two" },
    ]);
    expect(sql.get("SELECT seq FROM entries WHERE session_id = ?").get("nobody")).toBeUndefined();
    expect(sql.get("UPDATE entries SET tokens = 0 WHERE session_id = ?").run("s1")).toEqual({ changes: 2 });
  });

  it("runs @name statements from one object, a name used twice bound once", () => {
    expect(sql.get(INSERT_NAMED).get({ session: "s1", body: "x", tokens: 1 })).toEqual({ seq: 1 });
    const same = "SELECT count(*) AS n FROM entries WHERE session_id = @s OR body = @s OR tokens = @t";
    expect(sql.get(same).get({ s: "s1", t: 99 })).toEqual({ n: 1 });
    expect(() => sql.get(same).get({ s: "s1" })).toThrow(/missing named parameter "t"/);
  });

  it("pluck returns the first column; int8 comes back as a number", () => {
    sql.get(INSERT).run("s1", "a", 1);
    sql.get(INSERT).run("s1", "b", 2);
    const count = sql.get<number>("SELECT count(*), 'second' FROM entries WHERE session_id = ?").pluck();
    expect(count.get("s1")).toBe(2);
    expect(sql.get<string>("SELECT body FROM entries ORDER BY seq").pluck().all()).toEqual(["a", "b"]);
    expect(sql.get<number>("SELECT max(seq) FROM entries WHERE session_id = ?").pluck().get("nobody")).toBeNull();
    // The plucked statement is its own: the unplucked one still returns rows.
    expect(sql.get("SELECT body FROM entries ORDER BY seq").get()).toEqual({ body: "a" });
  });

  it("keeps a ? inside a string literal and a :: cast as they are", () => {
    sql.get(INSERT).run("s1", "what?", 1);
    const row = sql.get("SELECT body, 'is it? @no' AS q, ?::int8 AS n FROM entries WHERE body = 'what?' AND tokens = ?").get("41", 1);
    expect(row).toEqual({ body: "what?", q: "is it? @no", n: 41 });
  });

  it("prepares each statement under a name from its text, once per connection", () => {
    const statement = sql.get(INSERT);
    expect(sql.get(INSERT)).toBe(statement);
    db.begin("write");
    statement.run("s1", "a", 1);
    statement.run("s1", "b", 2);
    const prepared = db.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE statement = $1", [
      "INSERT INTO entries (session_id, body, tokens) VALUES ($1, $2, $3) RETURNING seq",
    ]).rows;
    expect(prepared).toHaveLength(1);
    expect(prepared[0]!.name).toMatch(/^bc_[0-9a-f]{32}$/);
    db.commit();
  });

  it("runs inside the bridge's transaction", () => {
    db.begin("write");
    sql.get(INSERT).run("s1", "a", 1);
    db.rollback();
    expect(sql.get<number>("SELECT count(*) FROM entries").pluck().get()).toBe(0);
  });

  it("a prepared statement still works after its table was altered (the cached plan is replaced)", () => {
    const all = sql.get("SELECT * FROM entries ORDER BY seq");
    sql.get(INSERT).run("s1", "a", 1);
    expect(all.all()).toEqual([{ seq: 1, session_id: "s1", body: "a", tokens: 1 }]);
    db.exec("ALTER TABLE entries ADD COLUMN extra text");
    try {
      expect(all.all()).toEqual([{ seq: 1, session_id: "s1", body: "a", tokens: 1, extra: null }]);
    } finally {
      db.exec("ALTER TABLE entries DROP COLUMN extra");
    }
  });

  it("reports the server's errors as PostgresError", () => {
    sql.get(INSERT).run("s1", "a", 1);
    const error = (() => {
      try {
        sql.get("INSERT INTO entries (seq, session_id, body) OVERRIDING SYSTEM VALUE VALUES (?, ?, ?)").run(1, "s1", "dup");
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(PostgresError);
    expect((error as PostgresError).code).toBe("23505");
  });
});
