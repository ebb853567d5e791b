/**
 * The engine seam (docs/storage.md): what differs between SQLite and PostgreSQL, behind one
 * small interface, so that SessionStore and every store/ module above the SQL keep one
 * implementation. The store logic talks SQL through `sql` (store/statements.ts) and runs it in
 * the engine's transactions; what cannot be written portably (schema and migrations, full-text
 * search, `json_each`/`INDEXED BY` statements, checkpoints, owner liveness) is the engine's.
 *
 * Synchronous on both engines (docs/design.md, "the store contract stays synchronous").
 */
import type { SessionEntry } from "@base-context/protocol";
import type { ProcessOwner } from "./owner.js";
import type { EntryRow } from "./rows.js";
import type { SearchQuery, SessionMatch } from "./search.js";
import type { SqlStatements } from "./statements.js";
import type { WriteRunner } from "./write-runner.js";

export type EngineKind = "sqlite" | "postgres";

/** Full-text search: SQLite's FTS5 (store/search.ts) or PostgreSQL's tsvector (store/postgres/search.ts). */
export interface SearchIndex {
  /** Indexes one entry (inside the caller's write transaction). */
  indexEntry(sql: SqlStatements, seq: number, entry: SessionEntry): void;
  /** Indexes every entry of a session written without EntryWriter.insert (a fork's copied path). */
  indexSession(sql: SqlStatements, sessionId: string): void;
  searchSessions(sql: SqlStatements, query: SearchQuery): SessionMatch[];
}

/**
 * Who owns a running import or compaction job, and whether that owner still runs. SQLite: a
 * process on this machine (pid + start identity, store/owner.ts). PostgreSQL: a daemon's lease,
 * held across hosts (store/postgres/lease.ts).
 */
export interface StoreOwners {
  /** This daemon as an owner. */
  current(): ProcessOwner;
  /** Whether `owner` is this daemon. */
  isSelf(owner: ProcessOwner): boolean;
  /** Whether `owner` still runs (for this daemon itself: true). */
  isAlive(owner: ProcessOwner): boolean;
}

export interface StoreEngine {
  readonly kind: EngineKind;
  /** Where the data is, for messages and logs: the file path, or the URL with its password redacted. */
  readonly location: string;
  readonly sql: SqlStatements;
  /**
   * Write transactions (nested calls are savepoints of the outer one). `lockKey` names the
   * session the work writes: PostgreSQL serialises writers per session with an advisory lock on
   * it (taken inside a transaction already open when that one did not name it); SQLite's
   * BEGIN IMMEDIATE already serialises every writer and ignores it.
   */
  readonly writer: WriteRunner;
  /** A write through `writer`, then whatever the engine does after a write that changed rows (checkpoints). */
  write<T>(work: () => T, lockKey?: string): T;
  /** Called after `writer` committed an append that wrote rows (the append path skips `write`'s bookkeeping). */
  noteWrite(): void;
  /** A read transaction: the statements in `work` see one snapshot while others write. */
  read<T>(work: () => T): T;
  readonly search: SearchIndex;
  /**
   * Runs an INSERT (named parameters) into a table keyed by `seq` and returns the new row's seq.
   * SQLite: the statement's last insert rowid (`RETURNING` costs twice as much there, on the
   * entries table); PostgreSQL: `RETURNING seq`.
   */
  insertReturningSeq(insertSql: string, params: Record<string, unknown>): number;
  /** The stored JSON of the entries with these seqs (any order; missing ones left out). */
  entryJsonBySeq(sessionId: string, seqs: readonly number[]): { seq: number; json: string }[];
  /** Entries of a session without a stored count below `beforeSeq`, newest first. */
  uncountedEntries(sessionId: string, beforeSeq: number, limit: number): EntryRow[];
  readonly owners: StoreOwners;
  readonly isOpen: boolean;
  /** Flushing is the store's; this closes connections and stops the engine's workers. */
  close(): Promise<void>;
}
