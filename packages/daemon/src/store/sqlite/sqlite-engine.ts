/**
 * The SQLite engine (the default): one database file, better-sqlite3, WAL. Several daemon
 * processes on one machine share the file; BEGIN IMMEDIATE serialises every writer
 * (write-lock.ts), and PASSIVE checkpoints run in a worker (checkpointer.ts).
 */
import type { Statement, Transaction } from "better-sqlite3";
import { log } from "../../log.js";
import { WalCheckpointer } from "./checkpointer.js";
import { openDatabase, type Db } from "./open-database.js";
import type { SearchIndex, StoreEngine, StoreOwners } from "../store-engine.js";
import { currentOwner, isOwnerAlive, isThisProcess, systemProbe, type OwnerProbe, type ProcessOwner } from "../owner.js";
import { ENTRY_COLUMNS, type EntryRow } from "../rows.js";
import { indexEntry, indexSession, searchSessions } from "./search.js";
import { Statements } from "./sqlite-statements.js";
import { createWriteRunner } from "./write-lock.js";
import type { WriteRunner } from "../write-runner.js";

export interface SqliteEngineOptions {
  path: string;
  /** "worker" (default): PASSIVE checkpoints in a worker thread; "sqlite": SQLite's automatic ones. */
  checkpoints?: "worker" | "sqlite";
  busyTimeoutMs: number;
  ownerProbe?: OwnerProbe;
}

const ENTRIES_BY_SEQ = "SELECT seq, json FROM entries WHERE session_id = ? AND seq IN (SELECT value FROM json_each(?))";
const TOTAL_CHANGES = "SELECT total_changes()";
const CHANGE_STAMP = "SELECT total_changes() || ':' || data_version FROM pragma_data_version";
// The partial index entries_uncounted holds the rows with tokens NULL only.
const UNCOUNTED_ENTRIES = `
  SELECT ${ENTRY_COLUMNS} FROM entries INDEXED BY entries_uncounted
  WHERE session_id = ? AND tokens IS NULL AND seq < ? ORDER BY seq DESC LIMIT ?`;

const sqliteSearch: SearchIndex = { indexEntry, indexSession, searchSessions };

/** Processes on this machine: pid + start identity (store/owner.ts). */
export function processOwners(probe: OwnerProbe = systemProbe): StoreOwners {
  return {
    current: currentOwner,
    isSelf: isThisProcess,
    isAlive: (owner: ProcessOwner) => isOwnerAlive(owner, probe),
  };
}

const ENTRY_EXISTS = "SELECT 1 FROM entries WHERE session_id = ? AND id = ?";
export class SqliteEngine implements StoreEngine {
  readonly kind = "sqlite";
  readonly location: string;
  readonly sql: Statements;
  readonly writer: WriteRunner;
  readonly search = sqliteSearch;
  readonly owners: StoreOwners;
  private readonly db: Db;
  private readonly transaction: Transaction<(work: () => unknown) => unknown>;
  private readonly checkpointer: WalCheckpointer | undefined;
  private readonly inserts = new Map<string, Statement>();

  constructor(options: SqliteEngineOptions) {
    this.location = options.path;
    const useWorker = (options.checkpoints ?? "worker") === "worker" && options.path !== ":memory:";
    this.db = openDatabase(options.path, { busyTimeoutMs: options.busyTimeoutMs, manualCheckpoints: useWorker });
    this.writer = createWriteRunner(this.db, options.busyTimeoutMs);
    this.sql = new Statements(this.db);
    this.transaction = this.db.transaction((work: () => unknown) => work());
    this.owners = processOwners(options.ownerProbe);
    this.checkpointer = useWorker
      ? new WalCheckpointer(options.path, { onFailure: () => this.db.open && this.db.pragma("wal_autocheckpoint = 1000") })
      : undefined;
  }

  get isOpen(): boolean {
    return this.db.open;
  }

  write<T>(work: () => T): T {
    const before = this.totalChanges();
    const result = this.writer(work);
    // A transaction that changed nothing (start-up housekeeping, usually) left nothing to checkpoint.
    if (this.totalChanges() !== before) this.checkpointer?.noteWrite();
    return result;
  }

  noteWrite(): void {
    this.checkpointer?.noteWrite();
  }

  read<T>(work: () => T): T {
    return this.transaction.deferred(work) as T;
  }

  insertReturningSeq(insertSql: string, params: Record<string, unknown>): { readonly seq: number } {
    let statement = this.inserts.get(insertSql);
    if (!statement) {
      statement = this.db.prepare(insertSql);
      this.inserts.set(insertSql, statement);
    }
    return { seq: Number(statement.run(params).lastInsertRowid) };
  }

  existingEntryIds(sessionId: string, ids: readonly string[]): Set<string> {
    const exists = this.sql.get(ENTRY_EXISTS);
    return new Set(ids.filter((id) => exists.get(sessionId, id) !== undefined));
  }

  entryJsonBySeq(sessionId: string, seqs: readonly number[]): { seq: number; json: string }[] {
    return this.sql.get<{ seq: number; json: string }>(ENTRIES_BY_SEQ).all(sessionId, JSON.stringify(seqs));
  }

  uncountedEntries(sessionId: string, beforeSeq: number, limit: number): EntryRow[] {
    return this.sql.get<EntryRow>(UNCOUNTED_ENTRIES).all(sessionId, beforeSeq, limit);
  }

  async close(): Promise<void> {
    if (this.db.open) {
      // The last connection to close a file copies the WAL back into it while holding the file's
      // exclusive lock: a process opening the file meanwhile (a daemon started as this one exits)
      // waits for all of it. A PASSIVE checkpoint first does that copy without the exclusive lock,
      // so what is left for the close is short. (Not the last connection: the copy is shared work.)
      try {
        this.db.pragma("wal_checkpoint(PASSIVE)");
      } catch (error) {
        log("debug", `WAL checkpoint before closing: ${(error as Error).message}`);
      }
      this.db.close();
    }
    await this.checkpointer?.close();
    const done = this.checkpointer?.stats;
    if (done) log("debug", `WAL checkpoint worker: ${done.checkpoints} checkpoints, ${done.mergeSteps} merge steps of the search index`);
  }

  changeStamp(): string {
    return this.sql.get<string>(CHANGE_STAMP).pluck().get()!;
  }

  private totalChanges(): number {
    return this.sql.get<number>(TOTAL_CHANGES).pluck().get()!;
  }
}
