/**
 * Opening the SQLite file: pragmas chosen for a single-writer-at-a-time, many-process workload
 * (two editor windows may run two daemons on one file), then the schema migrations.
 */
import Database from "better-sqlite3";
import { dirname } from "node:path";
import { createDatabaseFolder, secureDatabaseFiles, withPrivateUmask } from "../permissions.js";
import { migrate } from "./schema.js";
import { sqliteAddonError } from "./addon.js";

export type Db = Database.Database;

export interface OpenDatabaseOptions {
  /** How long a writer waits for another process's transaction before SQLITE_BUSY. */
  busyTimeoutMs?: number;
  /**
   * Leave WAL checkpoints to someone else (the checkpoint worker). When false, SQLite checkpoints
   * automatically inside commits, as it does by default.
   */
  manualCheckpoints?: boolean;
}

export function openDatabase(path: string, options: OpenDatabaseOptions = {}): Db {
  const onDisk = path !== ":memory:";
  if (onDisk) createDatabaseFolder(dirname(path));
  // Created owner-only (the -wal and -shm files take the database file's mode), then checked:
  // files made by an older version or another umask are tightened (store/permissions.ts).
  const db = withPrivateUmask(() => {
    try {
      return new Database(path);
    } catch (error) {
      // The driver loads its native addon here, on the first database opened.
      throw sqliteAddonError(error) ?? error;
    }
  });
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    withPrivateUmask(() => db.pragma("journal_mode = WAL"));
    if (onDisk) secureDatabaseFiles(path);
    // In WAL mode NORMAL loses at most the last commits on power loss, never consistency.
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma(`wal_autocheckpoint = ${options.manualCheckpoints ? 0 : 1000}`);
    // A big import grows the WAL; once checkpointed it is cut back to this size instead of staying large.
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
