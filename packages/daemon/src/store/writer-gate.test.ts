/**
 * The writer gate (a named pipe holding one token in front of SQLite's write lock): made when two
 * writers meet, one token after every transaction, extra tokens dropped, a token lost with a
 * SIGKILLed holder made again, and no gate (writers poll) wherever the pipe cannot be trusted.
 * That it shortens the wait under contention is a benchmark (bench/contention.mjs), not a test.
 */
import Database from "better-sqlite3";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chmodSync, closeSync, constants, existsSync, lstatSync, openSync, readFileSync, readSync, writeFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createWriteRunner } from "./write-lock.js";
import { holdLock } from "./test-support.js";
import { createWriterGate, type WriterGate } from "./writer-gate.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";

const dirs = tempDirs();
const sqliteModule = createRequire(import.meta.url).resolve("better-sqlite3");

/**
 * Another process that takes the gate's token (a blocking read, as a daemon's writer does), then
 * SQLite's write lock, says "holding" and stays so until it is killed.
 */
async function holderProcess(databasePath: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `const fs = require("node:fs");
       const Database = require(process.argv[1]);
       const fd = fs.openSync(process.argv[2] + "-gate", "r+");
       fs.readSync(fd, Buffer.alloc(1), 0, 1, null);
       const db = new Database(process.argv[2]);
       db.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES ('killed')");
       process.stdout.write("holding\\n");
       setInterval(() => {}, 1000);`,
      sqliteModule,
      databasePath,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let seen = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes("holding\n")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the holder exited with ${code}`)));
  });
  return child;
}

/** Reads every token in the pipe without waiting, and returns how many there were. */
function takeAllTokens(pipePath: string): number {
  const fd = openSync(pipePath, constants.O_RDWR | constants.O_NONBLOCK);
  try {
    let count = 0;
    for (;;) {
      try {
        count += readSync(fd, Buffer.alloc(64), 0, 64, null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EAGAIN") return count;
        throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

function putTokens(pipePath: string, count: number): void {
  const fd = openSync(pipePath, constants.O_RDWR | constants.O_NONBLOCK);
  writeSync(fd, Buffer.alloc(count, 1));
  closeSync(fd);
}

describe.skipIf(process.platform !== "linux")("the writer gate", () => {
  let folder: string;
  let path: string;
  let pipePath: string;
  let db: Database.Database;
  const gates: WriterGate[] = [];
  const children: ChildProcess[] = [];
  const gate = (options?: Parameters<typeof createWriterGate>[1]): WriterGate => {
    const made = createWriterGate(path, options)!;
    gates.push(made);
    return made;
  };
  /** Makes the pipe as a first contention does, holding the one token. */
  const meet = (writerGate: WriterGate): void => {
    writerGate.enter();
    writerGate.noteContention();
    writerGate.leave();
  };
  const rows = () => db.prepare("SELECT v FROM t ORDER BY rowid").pluck().all();

  beforeEach(() => {
    folder = dirs.make();
    path = join(folder, "gate.db");
    pipePath = `${path}-gate`;
    db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    db.exec("CREATE TABLE t (v TEXT)");
  });
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    for (const made of gates.splice(0)) made.close();
    db.close();
    dirs.remove(folder);
  });

  it("is made, private, when two writers meet, and holds one token after each transaction", async () => {
    const writerGate = gate();
    const write = createWriteRunner(db, 5000, writerGate);
    write(() => db.prepare("INSERT INTO t VALUES ('alone')").run());
    // A writer that never met another makes no pipe.
    expect(existsSync(pipePath)).toBe(false);
    const worker = await holdLock(path, 30);
    write(() => db.prepare("INSERT INTO t VALUES ('met')").run());
    await worker.terminate();
    const pipe = lstatSync(pipePath);
    expect(pipe.isFIFO()).toBe(true);
    expect(pipe.mode & 0o777).toBe(0o600);
    write(() => db.prepare("INSERT INTO t VALUES ('through the gate')").run());
    expect(rows()).toEqual(["alone", "held", "met", "through the gate"]);
    expect(writerGate.stats.free).toBe(1);
    expect(takeAllTokens(pipePath)).toBe(1);
  });

  it("drops extra tokens inside the lock, leaving one", () => {
    const writerGate = gate();
    meet(writerGate);
    putTokens(pipePath, 3);
    const write = createWriteRunner(db, 5000, writerGate);
    write(() => db.prepare("INSERT INTO t VALUES ('a')").run());
    expect(writerGate.stats).toMatchObject({ free: 1, dropped: 3 });
    expect(write.stats.gate).toMatchObject({ free: 1, dropped: 3 });
    expect(takeAllTokens(pipePath)).toBe(1);
  });

  it("gives the token back when the transaction fails or the lock is never taken", async () => {
    const writerGate = gate();
    meet(writerGate);
    const write = createWriteRunner(db, 30, writerGate);
    expect(() => write(() => { throw new Error("stale"); })).toThrow("stale");
    expect(takeAllTokens(pipePath)).toBe(1);
    putTokens(pipePath, 1);
    const worker = await holdLock(path, 1000);
    db.pragma("busy_timeout = 30");
    expect(() => write(() => db.prepare("INSERT INTO t VALUES ('late')").run())).toThrow(expect.objectContaining({ code: "SQLITE_BUSY" }));
    await worker.terminate();
    expect(takeAllTokens(pipePath)).toBe(1);
  });

  it("goes ahead without a token while the watchdog is not running, then makes again a token lost with a SIGKILLed holder", async () => {
    const writerGate = gate();
    meet(writerGate);
    const write = createWriteRunner(db, 5000, writerGate);
    // The pipe empty and no watchdog yet: no wait, and the transaction puts a token back.
    expect(takeAllTokens(pipePath)).toBe(1);
    write(() => db.prepare("INSERT INTO t VALUES ('first')").run());
    expect(writerGate.stats).toMatchObject({ free: 0, queued: 0 });
    // Its thread starts in the background; waiting for it is not a measure of speed.
    await vi.waitFor(() => expect(writerGate.watchdog).toBe("watching"), { timeout: 20_000, interval: 5 });

    // Another process takes the token and the write lock, and is killed holding both.
    const holder = await holderProcess(path);
    children.push(holder);
    holder.kill("SIGKILL");
    await once(holder, "exit");
    expect(takeAllTokens(pipePath)).toBe(0);

    // The token died with it: this writer queues, the watchdog makes one, and the write goes through.
    write(() => db.prepare("INSERT INTO t VALUES ('after the kill')").run());
    expect(rows()).toEqual(["first", "after the kill"]);
    expect(writerGate.stats.queued).toBe(1);
    expect(writerGate.stats.made).toBeGreaterThanOrEqual(1);
    // At least one: a token the watchdog makes just as the wait ends is dropped by a later writer.
    expect(takeAllTokens(pipePath)).toBeGreaterThanOrEqual(1);
  });

  it("wakes its parked watchdog for the next wait", async () => {
    const writerGate = gate();
    meet(writerGate);
    const write = createWriteRunner(db, 5000, writerGate);
    takeAllTokens(pipePath);
    write(() => db.prepare("INSERT INTO t VALUES ('first')").run());
    // A second without waits parks it; waiting for that is not a measure of speed.
    await vi.waitFor(() => expect(writerGate.watchdog).toBe("parked"), { timeout: 20_000, interval: 20 });
    // The token is lost (taken here and never given back): the next writer waits, and is let in.
    expect(takeAllTokens(pipePath)).toBe(1);
    write(() => db.prepare("INSERT INTO t VALUES ('second')").run());
    expect(rows()).toEqual(["first", "second"]);
    expect(writerGate.stats).toMatchObject({ queued: 1 });
    expect(writerGate.stats.made).toBeGreaterThanOrEqual(1);
  });

  it("is not used when the path is not a private named pipe: writers poll, the file is left alone", async () => {
    writeFileSync(pipePath, "not a pipe", { mode: 0o600 });
    const writerGate = gate();
    const write = createWriteRunner(db, 5000, writerGate);
    const worker = await holdLock(path, 30);
    write(() => db.prepare("INSERT INTO t VALUES ('polled')").run());
    await worker.terminate();
    write(() => db.prepare("INSERT INTO t VALUES ('again')").run());
    expect(rows()).toEqual(["held", "polled", "again"]);
    expect(readFileSync(pipePath, "utf8")).toBe("not a pipe");
    expect(writerGate.stats).toMatchObject({ free: 0, queued: 0, dropped: 0 });
  });

  it("is not used when others may read the pipe", () => {
    const made = gate();
    meet(made);
    made.close();
    chmodSync(pipePath, 0o644);
    const writerGate = gate();
    const write = createWriteRunner(db, 5000, writerGate);
    write(() => db.prepare("INSERT INTO t VALUES ('polled')").run());
    expect(writerGate.stats).toMatchObject({ free: 0, queued: 0 });
    expect(takeAllTokens(pipePath)).toBe(0);
  });

  it("leaves writers polling when the pipe cannot be made", async () => {
    const writerGate = gate({
      makeFifo: () => {
        throw new Error("mkfifo: not found");
      },
    });
    const write = createWriteRunner(db, 5000, writerGate);
    const worker = await holdLock(path, 30);
    write(() => db.prepare("INSERT INTO t VALUES ('polled')").run());
    await worker.terminate();
    write(() => db.prepare("INSERT INTO t VALUES ('again')").run());
    expect(rows()).toEqual(["held", "polled", "again"]);
    expect(existsSync(pipePath)).toBe(false);
  });

  it("takes and gives no token once closed", () => {
    const writerGate = gate();
    meet(writerGate);
    // Another daemon's descriptor: a pipe keeps its bytes only while someone has it open.
    const other = openSync(pipePath, constants.O_RDWR | constants.O_NONBLOCK);
    try {
      writerGate.close();
      const write = createWriteRunner(db, 5000, writerGate);
      write(() => db.prepare("INSERT INTO t VALUES ('closed')").run());
      expect(takeAllTokens(pipePath)).toBe(1);
      expect(writerGate.stats.free).toBe(0);
    } finally {
      closeSync(other);
    }
  });
});
