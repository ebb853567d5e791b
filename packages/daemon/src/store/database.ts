/**
 * Opening the SQLite file: pragmas chosen for a single-writer-at-a-time, many-process workload
 * (two editor windows may run two daemons on one file), then the schema migrations.
 */
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { migrate } from "./schema.js";

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
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    db.pragma("journal_mode = WAL");
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
