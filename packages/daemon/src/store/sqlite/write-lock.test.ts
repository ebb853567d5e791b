/**
 * The write runner: it waits for another connection's write lock by polling (SQLite's busy
 * handler would sleep up to 100 ms at a time), gives up with SQLITE_BUSY after the busy timeout,
 * leaves the busy timeout as it was, and nests as a savepoint. Latency under contention is a
 * benchmark (bench/contention.mjs), not a test.
 */
import Database from "better-sqlite3";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWriteRunner } from "./write-lock.js";
import { holdLock } from "../test-support.js";
import { tempDirs } from "../../../../../test/support/temp-dir.js";

const dirs = tempDirs();

describe("createWriteRunner", () => {
  let folder: string;
  let db: Database.Database;
  let path: string;
  beforeEach(() => {
    folder = dirs.make();
    path = join(folder, "lock.db");
    db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    db.exec("CREATE TABLE t (v TEXT)");
  });
  afterEach(() => {
    db.close();
    dirs.remove(folder);
  });

  it("waits for another connection's transaction, then writes", async () => {
    const write = createWriteRunner(db, 5000);
    const worker = await holdLock(path, 50);
    const released = new Promise((resolve) => worker.once("message", resolve));
    write(() => db.prepare("INSERT INTO t VALUES ('mine')").run());
    expect(db.prepare("SELECT v FROM t ORDER BY rowid").pluck().all()).toEqual(["held", "mine"]);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
    await released;
    await worker.terminate();
  });

  it("fails with SQLITE_BUSY once the busy timeout has passed", async () => {
    db.pragma("busy_timeout = 30");
    const write = createWriteRunner(db, 30);
    const worker = await holdLock(path, 1000);
    expect(() => write(() => db.prepare("INSERT INTO t VALUES ('late')").run())).toThrow(expect.objectContaining({ code: "SQLITE_BUSY" }));
    expect(db.inTransaction).toBe(false);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(30);
    await worker.terminate();
  });

  it("runs a nested write as a savepoint: its failure undoes only its own changes", () => {
    const write = createWriteRunner(db, 5000);
    write(() => {
      db.prepare("INSERT INTO t VALUES ('outer')").run();
      expect(() =>
        write(() => {
          db.prepare("INSERT INTO t VALUES ('inner')").run();
          throw new Error("inner failed");
        }),
      ).toThrow("inner failed");
    });
    expect(db.prepare("SELECT v FROM t").pluck().all()).toEqual(["outer"]);
    expect(() => write(() => { db.prepare("INSERT INTO t VALUES ('x')").run(); throw new Error("outer failed"); })).toThrow("outer failed");
    expect(db.prepare("SELECT v FROM t").pluck().all()).toEqual(["outer"]);
    expect(db.inTransaction).toBe(false);
  });

  it("runs deferred work with the next transaction instead of a transaction of its own", () => {
    const write = createWriteRunner(db, 5000);
    const done: boolean[] = [];
    write.defer(() => db.prepare("INSERT INTO t VALUES ('deferred')").run(), (written) => done.push(written));
    expect(write.hasDeferred).toBe(true);
    expect(db.prepare("SELECT v FROM t").pluck().all()).toEqual([]);
    write(() => db.prepare("INSERT INTO t VALUES ('next')").run());
    expect(db.prepare("SELECT v FROM t ORDER BY rowid").pluck().all()).toEqual(["deferred", "next"]);
    expect(done).toEqual([true]);
    expect(write.stats).toMatchObject({ transactions: 1, deferredAlong: 1 });
    // Nothing left: a flush begins no transaction.
    write.flushDeferred();
    expect(write.stats.transactions).toBe(1);
  });

  it("flushes deferred work in a transaction of its own when asked", () => {
    const write = createWriteRunner(db, 5000);
    write.defer(() => db.prepare("INSERT INTO t VALUES ('deferred')").run());
    write.flushDeferred();
    expect(db.prepare("SELECT v FROM t").pluck().all()).toEqual(["deferred"]);
    expect(write.hasDeferred).toBe(false);
    expect(write.stats).toMatchObject({ transactions: 1, deferredAlong: 0 });
  });

  it("drops deferred work that throws without touching the transaction it rode along with", () => {
    const write = createWriteRunner(db, 5000);
    const done: boolean[] = [];
    write.defer(
      () => {
        db.prepare("INSERT INTO t VALUES ('half')").run();
        throw new Error("the session is gone");
      },
      (written) => done.push(written),
    );
    write(() => db.prepare("INSERT INTO t VALUES ('next')").run());
    expect(db.prepare("SELECT v FROM t").pluck().all()).toEqual(["next"]);
    expect(done).toEqual([false]);
    expect(write.hasDeferred).toBe(false);
  });

  it("keeps deferred work for the next transaction when the one it rode along with is rolled back", () => {
    const write = createWriteRunner(db, 5000);
    const done: boolean[] = [];
    write.defer(() => db.prepare("INSERT INTO t VALUES ('deferred')").run(), (written) => done.push(written));
    expect(() => write(() => { throw new Error("stale"); })).toThrow("stale");
    expect(db.prepare("SELECT v FROM t").pluck().all()).toEqual([]);
    expect(done).toEqual([]);
    write(() => db.prepare("INSERT INTO t VALUES ('next')").run());
    expect(db.prepare("SELECT v FROM t ORDER BY rowid").pluck().all()).toEqual(["deferred", "next"]);
    expect(done).toEqual([true]);
  });

  it("counts transactions and how long they waited for the lock", async () => {
    const write = createWriteRunner(db, 5000);
    write(() => db.prepare("INSERT INTO t VALUES ('a')").run());
    write(() => write(() => db.prepare("INSERT INTO t VALUES ('nested')").run()));
    const worker = await holdLock(path, 30);
    write(() => db.prepare("INSERT INTO t VALUES ('b')").run());
    await worker.terminate();
    expect(write.stats.transactions).toBe(3);
    expect(write.stats.contended).toBe(1);
    expect(write.stats.waitHistogram.reduce((sum, count) => sum + count, 0)).toBe(3);
    expect(write.stats.longestWaitMs).toBeGreaterThan(0);
  });
});
