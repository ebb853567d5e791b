/**
 * Store tests on both engines: `describe.each(ENGINES)` and, inside, `useTestStores(engine)`,
 * which gives each test a fresh location (a SQLite file in a temp folder, or a fresh database on
 * the suite's PostgreSQL server, test/support/postgres.ts) and opens stores on it, several of
 * them standing for several daemons sharing one database. Stores are closed after each test.
 */
import { afterEach, beforeEach } from "vitest";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { startPostgres } from "../../../../test/support/postgres.js";
import { useSuiteResource } from "../../../../test/support/suite-resource.js";
import { tempDirs } from "../../../../test/support/temp-dir.js";
import { openStore, type OpenStoreOptions } from "./open-store.js";
import type { SessionStore } from "./session-store.js";
import type { StoreEngine } from "./store-engine.js";
import type { WriteLockStats } from "./write-runner.js";
import { postgresLocation, type StoreLocation } from "./store-location.js";

export const ENGINES = ["sqlite", "postgres"] as const;
export type EngineName = (typeof ENGINES)[number];

export interface TestStores {
  /** This test's location: a fresh SQLite file or PostgreSQL database. */
  readonly location: StoreLocation;
  /** The folder of this test (SQLite's file is in it; other files may go there too). */
  readonly folder: string;
  /** A store on this test's location (another daemon on the same database, when called again). */
  open(options?: Omit<OpenStoreOptions, "location">): SessionStore;
}

const dirs = tempDirs();

export function useTestStores(engine: EngineName): TestStores {
  const server = engine === "postgres" ? useSuiteResource(startPostgres, (started) => started.stop(), "the test PostgreSQL server") : undefined;
  let location: StoreLocation | undefined;
  let folder: string | undefined;
  const opened: SessionStore[] = [];

  beforeEach(async () => {
    folder = dirs.make();
    if (server) location = postgresLocation(await server.createDatabase());
    else location = { engine: "sqlite", path: join(folder, "store.db"), display: join(folder, "store.db") };
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    if (server) await server.dropDatabases();
    if (folder) dirs.remove(folder);
    location = undefined;
  });

  const current = (): StoreLocation => {
    if (!location) throw new Error("useTestStores: the location exists only inside a test");
    return location;
  };
  return {
    get location() {
      return current();
    },
    get folder() {
      if (!folder) throw new Error("useTestStores: the folder exists only inside a test");
      return folder;
    },
    open(options = {}) {
      const store = openStore({ checkpoints: "sqlite", ...options, location: current() });
      opened.push(store);
      return store;
    },
  };
}

/**
 * A worker thread that takes SQLite's write lock on the database at `path` (inserting into its
 * table `t`), says "locked", and commits after `holdMs`, then says "released": another
 * connection standing for another daemon in the middle of a write.
 */
export function holdLock(path: string, holdMs: number): Promise<Worker> {
  const worker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
     const Database = require(workerData.module);
     const db = new Database(workerData.path);
     db.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES ('held')");
     parentPort.postMessage("locked");
     setTimeout(() => { db.exec("COMMIT"); db.close(); parentPort.postMessage("released"); }, workerData.holdMs);`,
    { eval: true, workerData: { module: createRequire(import.meta.url).resolve("better-sqlite3"), path, holdMs } },
  );
  return new Promise((resolve) => worker.once("message", () => resolve(worker)));
}

/** Transactions a store began and how long they waited for the write lock (its engine's write runner, which the store keeps to itself). */
export function writeLockStats(store: SessionStore): Readonly<WriteLockStats> {
  return (store as unknown as { engine: Pick<StoreEngine, "writer"> }).engine.writer.stats;
}
