/**
 * The synchronous bridge against a real PostgreSQL server (test/support/postgres.ts), one
 * database per test.
 */
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findPostgresBinaries, type PostgresServer, startPostgres } from "../../../../../test/support/postgres.js";
import { PostgresError, PostgresUnavailableError, SyncPostgres } from "./sync-postgres.js";

let server: PostgresServer;
const opened: SyncPostgres[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
});

async function openDatabase(options: Parameters<typeof SyncPostgres.open>[1] = {}): Promise<{ db: SyncPostgres; url: string }> {
  const url = await server.createDatabase();
  const db = SyncPostgres.open(url, options);
  opened.push(db);
  return { db, url };
}

function openMore(url: string, options: Parameters<typeof SyncPostgres.open>[1] = {}): SyncPostgres {
  const db = SyncPostgres.open(url, options);
  opened.push(db);
  return db;
}

function caught(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("SyncPostgres", () => {
  it("runs statements with $n parameters and returns rows and the row count", async () => {
    const { db } = await openDatabase();
    db.exec("CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL); CREATE INDEX notes_body ON notes (body);");
    expect(db.query("INSERT INTO notes VALUES ($1, $2), ($3, $4)", [1, "one", 2, "two"]).rowCount).toBe(2);
    const { rows, rowCount } = db.query<{ id: number; body: string }>("SELECT id, body FROM notes WHERE id >= $1 ORDER BY id", [1]);
    expect(rows).toEqual([
      { id: 1, body: "one" },
      { id: 2, body: "two" },
    ]);
    expect(rowCount).toBe(2);
    expect(db.query("UPDATE notes SET body = 'x' WHERE id = $1", [3]).rowCount).toBe(0);
  });

  it("prepares a named statement once per connection and reuses it", async () => {
    const { db } = await openDatabase();
    db.begin("write"); // one pinned connection, to look at its prepared statements
    expect(db.query("SELECT $1::int + 1 AS n", [1], "plus_one").rows).toEqual([{ n: 2 }]);
    expect(db.query("SELECT $1::int + 1 AS n", [41], "plus_one").rows).toEqual([{ n: 42 }]);
    const prepared = db.query<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements");
    expect(prepared.rows).toEqual([{ name: "plus_one", statement: "SELECT $1::int + 1 AS n" }]);
    db.commit();
  });

  it("returns int8 (bigint, count(*)) and numeric (sum(bigint), avg) as JS numbers", async () => {
    const { db } = await openDatabase();
    const row = db.query(
      "SELECT 9007199254740991::int8 AS big, count(*) AS n, 7::int4 AS small, sum(i::int8) AS total, avg(i) AS mean FROM generate_series(1, 3) AS i",
    ).rows[0];
    expect(row).toEqual({ big: 9007199254740991, n: 3, small: 7, total: 6, mean: 2 });
    const arrays = db.query("SELECT ARRAY[1, 2]::int8[] AS seqs, ARRAY[[1.5], [NULL]]::numeric[] AS grid, 'x'::text AS s").rows[0];
    expect(arrays).toEqual({ seqs: [1, 2], grid: [[1.5], [null]], s: "x" });
  });

  it("refuses a timeout of zero (no bound) or less", () => {
    expect(() => SyncPostgres.open("postgres://127.0.0.1/x", { statementTimeoutMs: 0 })).toThrow(/statementTimeoutMs must be a positive/);
    expect(() => SyncPostgres.open("postgres://127.0.0.1/x", { connectTimeoutMs: -1 })).toThrow(RangeError);
  });

  it("commits a transaction on its pinned connection: others see nothing before COMMIT", async () => {
    const { db, url } = await openDatabase();
    const other = openMore(url);
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    db.begin("write");
    expect(db.inTransaction).toBe(true);
    const pid = db.query("SELECT pg_backend_pid() AS pid").rows[0]!.pid;
    db.query("INSERT INTO t VALUES (1)");
    db.query("INSERT INTO t VALUES (2)");
    expect(db.query("SELECT pg_backend_pid() AS pid").rows[0]!.pid).toBe(pid);
    expect(other.query("SELECT count(*) AS n FROM t").rows[0]).toEqual({ n: 0 });
    db.commit();
    expect(db.inTransaction).toBe(false);
    expect(other.query("SELECT count(*) AS n FROM t").rows[0]).toEqual({ n: 2 });
  });

  it("rolls a transaction back", async () => {
    const { db } = await openDatabase();
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    db.begin("write");
    db.query("INSERT INTO t VALUES (1)");
    db.exec("INSERT INTO t VALUES (2); INSERT INTO t VALUES (3);");
    db.rollback();
    expect(db.inTransaction).toBe(false);
    expect(db.query("SELECT count(*) AS n FROM t").rows[0]).toEqual({ n: 0 });
  });

  it("refuses a second begin, and commit/rollback without a transaction", async () => {
    const { db } = await openDatabase();
    expect(() => db.commit()).toThrow(/no PostgreSQL transaction is open/);
    expect(() => db.rollback()).toThrow(/no PostgreSQL transaction is open/);
    db.begin("read");
    expect(() => db.begin("write")).toThrow(/already open/);
    db.rollback();
  });

  it("a read transaction sees one snapshot and cannot write", async () => {
    const { db, url } = await openDatabase();
    const writer = openMore(url);
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    writer.query("INSERT INTO t VALUES (1)");
    db.begin("read");
    expect(db.query("SELECT count(*) AS n FROM t").rows[0]).toEqual({ n: 1 });
    writer.query("INSERT INTO t VALUES (2)");
    expect(db.query("SELECT count(*) AS n FROM t").rows[0]).toEqual({ n: 1 });
    const refused = caught(() => db.query("INSERT INTO t VALUES (3)"));
    expect(refused).toBeInstanceOf(PostgresError);
    expect((refused as PostgresError).code).toBe("25006"); // read_only_sql_transaction
    db.rollback();
    expect(db.query("SELECT count(*) AS n FROM t").rows[0]).toEqual({ n: 2 });
  });

  it("reports a unique violation as PostgresError 23505 and keeps working", async () => {
    const { db } = await openDatabase();
    db.exec("CREATE TABLE t (id int CONSTRAINT t_pkey PRIMARY KEY)");
    db.query("INSERT INTO t VALUES (1)");
    const error = caught(() => db.query("INSERT INTO t VALUES ($1)", [1], "insert_t"));
    expect(error).toBeInstanceOf(PostgresError);
    expect(error).not.toBeInstanceOf(PostgresUnavailableError);
    expect((error as PostgresError).code).toBe("23505");
    expect((error as PostgresError).constraint).toBe("t_pkey");
    expect((error as PostgresError).detail).toBe("Key (id)=(1) already exists.");
    expect(db.query("INSERT INTO t VALUES ($1)", [2], "insert_t").rowCount).toBe(1);
  });

  it("refuses to report a COMMIT as done when a statement of the transaction failed", async () => {
    const { db } = await openDatabase();
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    db.query("INSERT INTO t VALUES (1)");
    db.begin("write");
    db.query("INSERT INTO t VALUES (2)");
    expect(() => db.query("INSERT INTO t VALUES (1)")).toThrow(PostgresError);
    const error = caught(() => db.commit());
    expect(error).toBeInstanceOf(PostgresError);
    expect((error as PostgresError).code).toBe("25P02");
    expect(db.inTransaction).toBe(false);
    expect(db.query("SELECT id FROM t ORDER BY id").rows).toEqual([{ id: 1 }]);
  });

  it("reports a syntax error with its SQLSTATE", async () => {
    const { db } = await openDatabase();
    const error = caught(() => db.query("SELEC 1"));
    expect(error).toBeInstanceOf(PostgresError);
    expect((error as PostgresError).code).toBe("42601");
  });

  it("cancels a statement beyond statement_timeout with a clear error, then keeps working", async () => {
    const { db } = await openDatabase({ statementTimeoutMs: 200 });
    const error = caught(() => db.query("SELECT pg_sleep(30)"));
    expect(error).toBeInstanceOf(PostgresError);
    expect((error as PostgresError).code).toBe("57014");
    expect(error.message).toMatch(/statement timeout \(statement_timeout is 200 ms\)/);
    expect(db.query("SELECT 1 AS one").rows).toEqual([{ one: 1 }]);
  });

  it("fails fast with PostgresUnavailableError when nothing listens at the address", async () => {
    const closedPort = await portWithNobody();
    const error = caught(() => SyncPostgres.open(`postgres://postgres@127.0.0.1:${closedPort}/postgres`));
    expect(error).toBeInstanceOf(PostgresUnavailableError);
    expect(error.message).toMatch(/cannot connect to PostgreSQL/);
    expect((error as PostgresUnavailableError).code).toBe("ECONNREFUSED");
  });

  it("a server that stops answering gives PostgresUnavailableError, never a hang; then it reconnects", async () => {
    const url = new URL(await server.createDatabase());
    const proxy = await startProxy(Number(url.port));
    url.port = String(proxy.port);
    const db = openMore(url.href, { statementTimeoutMs: 300, connectTimeoutMs: 1000 });
    expect(db.query("SELECT 1 AS one").rows).toEqual([{ one: 1 }]);
    await proxy.freeze();
    expect(() => db.query("SELECT 2 AS two")).toThrow(PostgresUnavailableError);
    await proxy.thaw();
    expect(db.query("SELECT 3 AS three").rows).toEqual([{ three: 3 }]);
    await proxy.close();
  });

  it("a transaction whose connection is killed fails with PostgresUnavailableError; rollback ends it; the next call works", async () => {
    const { db, url } = await openDatabase({ applicationName: "victim" });
    const admin = openMore(url);
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    db.begin("write");
    const pid = db.query("SELECT pg_backend_pid() AS pid").rows[0]!.pid;
    db.query("INSERT INTO t VALUES (1)");
    expect(admin.query("SELECT pg_terminate_backend($1) AS done", [pid]).rows).toEqual([{ done: true }]);
    expect(() => db.query("INSERT INTO t VALUES (2)")).toThrow(PostgresUnavailableError);
    expect(db.inTransaction).toBe(true);
    expect(() => db.query("SELECT 1")).toThrow(/lost during the transaction/);
    db.rollback();
    expect(db.inTransaction).toBe(false);
    expect(db.query("SELECT count(*) AS n FROM t").rows).toEqual([{ n: 0 }]);
  });

  it("the server stopped gives PostgresUnavailableError; after a restart the next call works", async () => {
    const { db } = await openDatabase({ connectTimeoutMs: 2000 });
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    db.query("INSERT INTO t VALUES (1)");
    const control = serverControl(db);
    control.stop();
    try {
      expect(() => db.query("SELECT count(*) AS n FROM t")).toThrow(PostgresUnavailableError);
      // BEGIN is pipelined with the transaction's first statement, which meets the failure.
      db.begin("write");
      expect(() => db.query("SELECT count(*) AS n FROM t")).toThrow(PostgresUnavailableError);
      db.rollback();
      expect(db.inTransaction).toBe(false);
    } finally {
      control.start();
    }
    expect(db.query("SELECT count(*) AS n FROM t").rows).toEqual([{ n: 1 }]);
  });

  it("pipelines a transaction: one round trip per answer waited for, not per statement", async () => {
    const { db } = await openDatabase();
    db.exec("CREATE TABLE t (id int PRIMARY KEY, body text)");
    const before = db.traffic;
    db.begin("write");
    const sent = [db.send("INSERT INTO t VALUES ($1, $2)", [1, "one"]), db.send("INSERT INTO t VALUES ($1, $2)", [2, "two"])];
    db.send("UPDATE t SET body = body || '!'");
    expect(db.query<{ n: number }>("SELECT count(*) AS n FROM t").rows).toEqual([{ n: 2 }]);
    db.commit();
    expect(db.traffic.statements - before.statements).toBe(6);
    expect(db.traffic.roundTrips - before.roundTrips).toBe(2);
    // A result not kept is asked for while the transaction is open, or never.
    expect(() => sent[1]!.changes).toThrow(/ended before its result was read/);
    db.begin("write");
    const update = db.send("UPDATE t SET body = $1", ["x"]);
    const kept = db.send("SELECT count(*) AS n FROM t", [], undefined, true);
    const trips = db.traffic.roundTrips;
    expect(update.changes).toBe(2); // waits for it: one round trip
    db.commit();
    expect(kept.rows).toEqual([{ n: 2 }]); // came back with the commit
    expect(db.traffic.roundTrips - trips).toBe(2);
    expect(db.query("SELECT id, body FROM t ORDER BY id").rows).toEqual([
      { id: 1, body: "x" },
      { id: 2, body: "x" },
    ]);
  });

  it("commitAsync: the thread goes on while the server commits; kept results and failures come with the answer", async () => {
    const { db, url } = await openDatabase();
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    db.begin("write");
    db.send("INSERT INTO t VALUES ($1)", [1]);
    const kept = db.send("SELECT count(*) AS n FROM t", [], undefined, true);
    // The server is busy with this transaction for half a second before its COMMIT.
    db.send("SELECT pg_sleep(0.5)");
    const committed = db.commitAsync();
    expect(db.inTransaction).toBe(false);
    // Meanwhile: another transaction on another connection, which does not see the row yet.
    db.begin("read");
    expect(db.query("SELECT count(*) AS n FROM t").rows).toEqual([{ n: 0 }]);
    db.release();
    await committed;
    expect(kept.rows).toEqual([{ n: 1 }]);
    expect(db.query("SELECT count(*) AS n FROM t").rows).toEqual([{ n: 1 }]);
    // A statement's failure rejects the commit, and nothing of the transaction stays.
    db.begin("write");
    db.send("INSERT INTO t VALUES ($1)", [2]);
    db.send("INSERT INTO t VALUES ($1)", [1]); // unique violation
    await expect(db.commitAsync()).rejects.toMatchObject({ code: "23505" });
    expect(db.query("SELECT id FROM t ORDER BY id").rows).toEqual([{ id: 1 }]);
    // close() lets a commit already sent finish before it ends the connections.
    db.begin("write");
    db.send("SELECT pg_sleep(0.2)");
    db.send("INSERT INTO t VALUES ($1)", [3]);
    const last = db.commitAsync();
    await db.close();
    await expect(last).resolves.toBeUndefined();
    const check = openMore(url);
    expect(check.query("SELECT id FROM t ORDER BY id").rows).toEqual([{ id: 1 }, { id: 3 }]);
  });

  it("commitAsync sends a write transaction of one statement alone: one statement, a transaction of its own, at READ COMMITTED", async () => {
    const { db } = await openDatabase();
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    // Whatever the server's default, the statement runs at the level a write transaction begins with.
    const name = db.query<{ name: string }>("SELECT current_database() AS name").rows[0]!.name;
    db.exec(`ALTER DATABASE "${name}" SET default_transaction_isolation = 'serializable'`);
    const insert = "INSERT INTO t VALUES ($1) RETURNING current_setting('transaction_isolation') AS level";
    // What the connection that answered last ran last (the backends keep it while idle).
    const lastRun = () =>
      db.query<{ query: string }>(
        "SELECT query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle' ORDER BY state_change DESC LIMIT 1",
      ).rows[0]?.query;
    const before = db.traffic;
    db.begin("write");
    const sent = db.send(insert, [1], undefined, true);
    await db.commitAsync();
    const sentAlone = { statements: db.traffic.statements - before.statements, roundTrips: db.traffic.roundTrips - before.roundTrips };
    expect(sentAlone).toEqual({ statements: 1, roundTrips: 1 });
    expect(sent.rows).toEqual([{ level: "read committed" }]);
    expect(lastRun()).toBe(insert);
    // Two statements keep their BEGIN and COMMIT.
    const beforeTwo = db.traffic;
    db.begin("write");
    db.send("SELECT 1");
    const second = db.send(insert, [2], undefined, true);
    await db.commitAsync();
    expect(db.traffic.statements - beforeTwo.statements).toBe(4);
    expect(second.rows).toEqual([{ level: "read committed" }]);
    expect(lastRun()).toBe("COMMIT");
    // A lone statement that fails writes nothing and rejects the commit with the server's error.
    db.begin("write");
    db.send("INSERT INTO t VALUES ($1), ($2)", [3, 1]);
    await expect(db.commitAsync()).rejects.toMatchObject({ code: "23505" });
    expect(db.query("SELECT id FROM t ORDER BY id").rows).toEqual([{ id: 1 }, { id: 2 }]);
  });

  // The worker is private; stopping it stands for a crash of the thread (as in the test below).
  const workerOf = (db: SyncPostgres) => (db as unknown as { worker: import("node:worker_threads").Worker }).worker;

  it("commitAsync of a transaction that waited for nothing is made on this thread's own connection, beside the worker", async () => {
    const applicationName = "bc-event-loop-commits";
    const { db, url } = await openDatabase({ applicationName });
    const admin = openMore(url);
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    db.begin("write");
    db.send("INSERT INTO t VALUES ($1)", [1]);
    const kept = db.send("SELECT count(*) AS n FROM t", [], undefined, true);
    db.send("SELECT pg_sleep(0.3)");
    const committed = db.commitAsync();
    // The worker stops while the server commits: this commit never went through it.
    await workerOf(db).terminate();
    await expect(committed).resolves.toBeUndefined();
    expect(kept.rows).toEqual([{ n: 1 }]);
    // A transaction that waited for an answer is the worker's until its end, commit included: a
    // worker that stops takes that commit with it.
    db.begin("write");
    db.send("INSERT INTO t VALUES ($1)", [2]);
    expect(db.query<{ n: number }>("SELECT count(*) AS n FROM t").rows).toEqual([{ n: 2 }]);
    db.send("SELECT pg_sleep(0.3)");
    const lost = db.commitAsync();
    await workerOf(db).terminate();
    await expect(lost).rejects.toThrow(PostgresUnavailableError);
    // So is a large one (an import batch's size), even when it waited for nothing.
    db.begin("write");
    db.send("INSERT INTO t VALUES ($1)", [3]);
    db.send("SELECT length($1) AS n", ["x".repeat(100_000)]);
    db.send("SELECT pg_sleep(0.3)");
    const large = db.commitAsync();
    await workerOf(db).terminate();
    await expect(large).rejects.toThrow(PostgresUnavailableError);
    expect(admin.query("SELECT id FROM t ORDER BY id").rows).toEqual([{ id: 1 }]);
    // close() ends this thread's connections too.
    const connections = () =>
      admin.query<{ n: number }>("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1", [applicationName]).rows[0]!.n;
    expect(connections()).toBeGreaterThan(0);
    await db.close();
    await expect.poll(connections, { timeout: 5000 }).toBe(0);
  });

  it("a sent statement's failure is thrown by the next call that waits; a rollback ends the transaction", async () => {
    const { db } = await openDatabase();
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    db.query("INSERT INTO t VALUES (1)");
    db.begin("write");
    db.send("INSERT INTO t VALUES ($1)", [2]);
    db.send("INSERT INTO t VALUES ($1)", [1]); // unique violation
    db.send("INSERT INTO t VALUES ($1)", [3]); // refused: the transaction is aborted
    const error = caught(() => db.commit());
    expect(error).toBeInstanceOf(PostgresError);
    expect((error as PostgresError).code).toBe("23505");
    expect(db.inTransaction).toBe(false);
    expect(db.query("SELECT id FROM t ORDER BY id").rows).toEqual([{ id: 1 }]);
    // Undone to a savepoint, the transaction goes on.
    db.begin("write");
    db.send("SAVEPOINT a");
    db.send("INSERT INTO t VALUES ($1)", [1]);
    expect((caught(() => db.query("RELEASE SAVEPOINT a")) as PostgresError).code).toBe("23505");
    db.send("ROLLBACK TO SAVEPOINT a");
    db.send("INSERT INTO t VALUES ($1)", [4]);
    db.commit();
    expect(db.query("SELECT id FROM t ORDER BY id").rows).toEqual([{ id: 1 }, { id: 4 }]);
  });

  it("delivers NOTIFY payloads to listeners on the event loop, until disposed", async () => {
    const { db, url } = await openDatabase();
    const other = openMore(url);
    const first: string[] = [];
    const second: string[] = [];
    let arrived!: () => void;
    const both = new Promise<void>((resolve) => (arrived = resolve));
    const subscription = db.listen("entries changed", (payload) => first.push(payload));
    db.listen("entries changed", (payload) => {
      second.push(payload);
      if (second.length === 2) arrived();
    });
    other.query("SELECT pg_notify('entries changed', 'a'), pg_notify('entries changed', 'b')");
    await both;
    expect(first).toEqual(["a", "b"]);
    expect(second).toEqual(["a", "b"]);

    // After dispose, a notification sent before one on another channel is not delivered: they
    // arrive in order on the one LISTEN connection.
    subscription.dispose();
    const marker = new Promise<string>((resolve) => db.listen("marker", resolve));
    other.begin("write");
    other.query("SELECT pg_notify('entries changed', 'c')");
    other.query("SELECT pg_notify('marker', 'm')");
    other.commit();
    expect(await marker).toBe("m");
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(first).toEqual(["a", "b"]);
    expect(second).toEqual(["a", "b", "c"]);
  });

  it("reconnects the LISTEN connection after it is killed, and says so", async () => {
    const { db, url } = await openDatabase({ applicationName: "listener" });
    const admin = openMore(url);
    let reconnected!: () => void;
    const back = new Promise<void>((resolve) => (reconnected = resolve));
    const payloads: string[] = [];
    let got!: (payload: string) => void;
    const delivered = new Promise<string>((resolve) => (got = resolve));
    db.listen(
      "news",
      (payload) => {
        payloads.push(payload);
        got(payload);
      },
      { onReconnect: reconnected },
    );
    const killed = admin.query(
      "SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE datname = current_database() AND query = $1",
      ['LISTEN "news"'],
    );
    expect(killed.rows).toEqual([{ done: true }]);
    await back;
    admin.query("SELECT pg_notify('news', 'after')");
    expect(await delivered).toBe("after");
  });

  it("a worker that stopped is replaced: its transaction is lost, LISTEN resumes", async () => {
    const { db, url } = await openDatabase();
    const other = openMore(url);
    db.exec("CREATE TABLE t (id int PRIMARY KEY)");
    let reconnected!: () => void;
    const back = new Promise<void>((resolve) => (reconnected = resolve));
    let got!: (payload: string) => void;
    const delivered = new Promise<string>((resolve) => (got = resolve));
    db.listen("news", got, { onReconnect: reconnected });
    db.begin("write");
    db.query("INSERT INTO t VALUES (1)");
    await workerOf(db).terminate();
    await back;
    expect(() => db.query("INSERT INTO t VALUES (2)")).toThrow(PostgresUnavailableError);
    expect(db.inTransaction).toBe(true);
    db.rollback();
    expect(db.query("SELECT count(*) AS n FROM t").rows).toEqual([{ n: 0 }]);
    other.query("SELECT pg_notify('news', 'still here')");
    expect(await delivered).toBe("still here");
  });

  it("throws on any call after close()", async () => {
    const { db } = await openDatabase();
    await db.close();
    expect(() => db.query("SELECT 1")).toThrow(/closed/);
    await db.close();
  });

  it.each(["close", "leave"])("lets the process exit (%s), printing nothing on stdout", async (how) => {
    const url = await server.createDatabase();
    const fixture = fileURLToPath(new URL("./fixtures/bridge-and-exit.mjs", import.meta.url));
    const child = spawn(process.execPath, [fixture, url, how], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let errors = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
    expect(errors).toBe("");
    expect(output).toBe(`done: ${how}\n`);
    expect(signal).toBeNull();
    expect(code).toBe(0);
  });
});

/** Stops and starts the test server (same data folder, port and settings) behind `db`. */
function serverControl(db: SyncPostgres): { stop(): void; start(): void } {
  const dataDir = db.query<{ data_directory: string }>("SHOW data_directory").rows[0]!.data_directory;
  // The server's command line, as pg_ctl recorded it: the program, then its quoted arguments.
  const options = readFileSync(join(dataDir, "postmaster.opts"), "utf8").trim().replace(/^\S+\s+"-D"\s+"[^"]*"\s*/, "");
  const pgCtl = join(findPostgresBinaries(), "pg_ctl");
  const run = (args: string[]) => {
    const asRoot = process.getuid?.() === 0;
    const [command, commandArgs] = asRoot ? ["runuser", ["-u", "postgres", "--", pgCtl, ...args]] : [pgCtl, args];
    const result = spawnSync(command, commandArgs, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C" } });
    if (result.status !== 0) throw new Error(`pg_ctl ${args[0]} failed: ${result.stdout}${result.stderr}`);
  };
  return {
    stop: () => run(["stop", "-D", dataDir, "-m", "fast", "-w"]),
    start: () => run(["start", "-D", dataDir, "-w", "-t", "60", "-l", join(dataDir, "..", "server.log"), "-o", options]),
  };
}

function portWithNobody(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** The freezable proxy (fixtures/freezable-proxy.mjs) in its own process. */
interface Proxy {
  port: number;
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  close(): Promise<void>;
}

async function startProxy(targetPort: number): Promise<Proxy> {
  const fixture = fileURLToPath(new URL("./fixtures/freezable-proxy.mjs", import.meta.url));
  const child = spawn(process.execPath, [fixture, String(targetPort)], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextLine = async () => (await lines.next()).value as string;
  const port = Number((await nextLine()).replace(/^port /, ""));
  const command = async (word: string) => {
    child.stdin.write(`${word}\n`);
    expect(await nextLine()).toBe(word);
  };
  return {
    port,
    freeze: () => command("freeze"),
    thaw: () => command("thaw"),
    close: async () => {
      child.stdin.end();
      await once(child, "exit");
    },
  };
}
