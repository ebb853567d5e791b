import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WalCheckpointer } from "./checkpointer.js";
import { openDatabase, type Db } from "./open-database.js";
import { tempDirs } from "../../../../../test/support/temp-dir.js";

const dirs = tempDirs();

const openAndLeave = fileURLToPath(new URL("../fixtures/open-and-leave.mjs", import.meta.url));

describe("checkpoint worker", () => {
  let folder: string;
  beforeEach(() => (folder = dirs.make()));
  afterEach(() => dirs.remove(folder));

  it("never keeps the process alive, even when the store is not closed", async () => {
    const child = spawn(process.execPath, [openAndLeave, join(folder, "left.db")], { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill(), 15_000);
    const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
    clearTimeout(timer);
    expect(output).toBe("written\n");
    expect(signal).toBeNull();
    expect(code).toBe(0);
  }, 30_000);
});

describe("search index merges", () => {
  let folder: string;
  beforeEach(() => (folder = dirs.make()));
  afterEach(() => dirs.remove(folder));

  /** A store database whose search index was written by `transactions` separate transactions. */
  function indexedDatabase(transactions: number): { path: string; db: Db } {
    const path = join(folder, "sessions.db");
    const db = openDatabase(path, { busyTimeoutMs: 5000, manualCheckpoints: true });
    const insert = db.prepare("INSERT INTO entries_fts (rowid, text) VALUES (?, ?)");
    for (let seq = 1; seq <= transactions; seq++) insert.run(seq, `entry ${seq} about the theme number ${seq % 7} and more words`);
    return { path, db };
  }

  it("turns the index's automerge off, merges it once the database is idle, and the index stays whole", async () => {
    const { path, db } = indexedDatabase(300);
    const automerge = () => db.prepare("SELECT v FROM entries_fts_config WHERE k = 'automerge'").pluck().get();
    expect(automerge()).toBeUndefined(); // FTS5's default (4): merging inside every writing transaction
    const checkpointer = new WalCheckpointer(path, { delayMs: 5, mergeIdleMs: 20 });
    try {
      checkpointer.noteWrite();
      await vi.waitFor(() => expect(checkpointer.stats.mergeSteps).toBeGreaterThan(0), { timeout: 20_000, interval: 20 });
      expect(automerge()).toBe(0);
      // Whole after merging: the integrity check passes and every entry is still found.
      db.prepare("INSERT INTO entries_fts (entries_fts, rank) VALUES ('integrity-check', 1)").run();
      expect(db.prepare("SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'theme'").pluck().get()).toBe(300);
    } finally {
      await checkpointer.close();
      db.close();
    }
  });

  it("leaves a database without a search index alone", async () => {
    const path = join(folder, "plain.db");
    const db = openDatabase(path, { busyTimeoutMs: 5000, manualCheckpoints: true });
    db.exec("CREATE TABLE t (x)");
    db.prepare("INSERT INTO t VALUES (1)").run();
    const failures: Error[] = [];
    const checkpointer = new WalCheckpointer(path, { delayMs: 5, mergeIdleMs: 5, onFailure: (error) => failures.push(error) });
    try {
      checkpointer.noteWrite();
      await vi.waitFor(() => expect(checkpointer.stats.checkpoints).toBeGreaterThan(0), { timeout: 20_000, interval: 10 });
      expect(checkpointer.stats.mergeSteps).toBe(0);
      expect(failures).toEqual([]);
    } finally {
      await checkpointer.close();
      db.close();
    }
  });
});
